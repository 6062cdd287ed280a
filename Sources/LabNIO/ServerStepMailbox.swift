import LabCore
import Synchronization

/// Hands the server's per-exchange steps to the client that caused them, when both run in
/// this process: the runner then records one sample per step per exchange, summed over
/// both sides, exactly as it does in process.
///
/// A client opens a box under its local port; the server deposits an exchange's steps in the
/// box of the peer's port before it writes the answer, so the client finds them as soon as
/// the answer arrives. Ports nobody opened (outside clients) are ignored.
final class ServerStepMailbox: Sendable {
    private let boxes = Mutex<[Int: [StepTimings]]>([:])

    /// Starts collecting for the client whose local port is `port`.
    func open(port: Int) {
        self.boxes.withLock { $0[port] = [] }
    }

    /// Stops collecting for `port`.
    func close(port: Int) {
        _ = self.boxes.withLock { $0.removeValue(forKey: port) }
    }

    /// Leaves one exchange's steps for the client at `port`, if it is ours.
    func deposit(_ timings: StepTimings, port: Int) {
        self.boxes.withLock { boxes in
            if boxes[port] != nil { boxes[port]!.append(timings) }
        }
    }

    /// The oldest exchange's steps left for `port`.
    func take(port: Int) -> StepTimings? {
        self.boxes.withLock { boxes in
            guard var queue = boxes[port], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            boxes[port] = queue
            return first
        }
    }
}
