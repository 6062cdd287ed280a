import Synchronization

/// Bytes shared by concurrent work, taken in parts as large as are left: work that cannot
/// get its whole share does less (a smaller page) instead of waiting or failing.
final class ByteAllowance: Sendable {
    let limit: Int
    private let taken = Mutex(0)

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// What one piece of work holds; `give` returns it (once).
    final class Share: Sendable {
        let bytes: Int
        private let allowance: ByteAllowance
        private let given = Mutex(false)

        init(bytes: Int, allowance: ByteAllowance) {
            self.bytes = bytes
            self.allowance = allowance
        }

        func give() {
            let first = self.given.withLock { given in
                defer { given = true }
                return !given
            }
            if first { self.allowance.taken.withLock { $0 -= self.bytes } }
        }
    }

    /// Up to `bytes`, as much as is left (possibly none).
    func take(upTo bytes: Int) -> Share {
        let granted = self.taken.withLock { taken in
            let granted = max(0, min(bytes, self.limit - taken))
            taken += granted
            return granted
        }
        return Share(bytes: granted, allowance: self)
    }

    /// Bytes held now.
    var held: Int { self.taken.withLock { $0 } }
}
