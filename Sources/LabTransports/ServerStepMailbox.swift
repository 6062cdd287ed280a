import LabCore
import NIOCore
import Synchronization

/// Hands the server's per-exchange steps to the client that caused them, when both run in
/// this process: the runner then records one sample per step per exchange, summed over
/// both sides, exactly as it does in process.
///
/// A client opens a box under its local address (`ip:port`) when it connects; the server's
/// connection looks that box up once, at its first answer, keeps it, and leaves each
/// exchange's steps in it before writing the answer, so the client finds them as soon as the
/// answer arrives. Connections from outside this process find no box. A box the client has
/// closed takes nothing more, so a late server task cannot feed a new client that reuses
/// the port.
final class ServerStepMailbox: Sendable {
    /// One client connection's steps, in exchange order.
    final class Box: Sendable {
        private struct State {
            var open = true
            var queue: [StepTimings] = []
        }

        private let state = Mutex(State())

        func deposit(_ timings: StepTimings) {
            self.state.withLock { state in
                if state.open { state.queue.append(timings) }
            }
        }

        func take() -> StepTimings? {
            self.state.withLock { state in
                state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
        }

        func close() {
            self.state.withLock { state in
                state.open = false
                state.queue.removeAll()
            }
        }
    }

    private let boxes = Mutex<[String: Box]>([:])

    /// Whether the server reads each step's thread usage (`TransportOptions.readsUsage`), so
    /// that the steps it hands over carry their CPU time.
    let readsUsage: Bool

    init(readsUsage: Bool = false) {
        self.readsUsage = readsUsage
    }

    /// `ip:port` of a socket address: the client's local one is the server's remote one.
    static func key(_ address: SocketAddress?) -> String {
        guard let address else { return "?" }
        return "\(address.ipAddress ?? "?"):\(address.port ?? -1)"
    }

    /// Opens the box of the client connection whose local address is `address`.
    func open(address: String) -> Box {
        let box = Box()
        self.boxes.withLock { $0[address] = box }
        return box
    }

    /// Closes `box`, and forgets it unless the address already belongs to a newer one.
    func close(_ box: Box, address: String) {
        box.close()
        self.boxes.withLock { boxes in
            if boxes[address] === box { boxes[address] = nil }
        }
    }

    /// The box of the client at `address`, if it is one of ours.
    func box(for address: String) -> Box? {
        self.boxes.withLock { $0[address] }
    }
}
