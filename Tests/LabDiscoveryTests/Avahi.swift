import Foundation
import LabTestSupport

/// Avahi's own command-line tools, the independent side of the discovery tests.
enum Avahi {
    static let browse = URL(fileURLWithPath: "/usr/bin/avahi-browse")
    static let publish = URL(fileURLWithPath: "/usr/bin/avahi-publish-service")

    /// Why a test cannot use Avahi.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// A name no other test or run uses.
    static func uniqueName(_ prefix: String) -> String {
        "lab-\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Throws, telling what to run, unless avahi-daemon runs and avahi-utils is installed.
    /// The check runs on a thread of its own (`runBlocking`), not on the concurrency pool.
    static func requireDaemon() async throws {
        for tool in [Self.browse, Self.publish] where !FileManager.default.isExecutableFile(atPath: tool.path) {
            throw Unavailable(description: "\(tool.path) is missing: run scripts/setup.sh (it installs avahi-utils)")
        }
        let check = try await runBlocking {
            try ChildProcess.runWaiting(URL(fileURLWithPath: "/usr/sbin/avahi-daemon"), ["--check"])
        }
        guard check.status == 0 else {
            throw Unavailable(
                description: "avahi-daemon is not running: run scripts/services.sh (as root) to start it and D-Bus"
            )
        }
    }
}

extension Avahi {
    /// A resolved instance as `avahi-browse -rp` prints it.
    struct Entry: Equatable, Sendable {
        var interface: String
        var name: String
        var type: String
        var host: String
        var address: String
        var port: Int
        /// The TXT strings, e.g. `tls=0`.
        var txt: Set<String>

        /// Parses a resolved line:
        /// `=;lo;IPv4;name;_crypttest._tcp;local;vm.local;127.0.0.1;4242;"proto=cx/1" "tls=0"`.
        init?(line: String) {
            let fields = line.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false)
            guard fields.count == 10, fields[0] == "=", let port = Int(fields[8]) else { return nil }
            self.interface = String(fields[1])
            self.name = String(fields[3])
            self.type = String(fields[4])
            self.host = String(fields[6])
            self.address = String(fields[7])
            self.port = port
            self.txt = Self.strings(String(fields[9]))
        }

        /// `"a=1" "b"` → `["a=1", "b"]` (avahi-browse quotes each TXT string).
        private static func strings(_ text: String) -> Set<String> {
            var strings: Set<String> = []
            var current: String?
            for character in text {
                if character == "\"" {
                    if let string = current { strings.insert(string) }
                    current = current == nil ? "" : nil
                } else {
                    current?.append(character)
                }
            }
            return strings
        }
    }

    /// `avahi-browse -rp <type>` running in the background: what the daemon announces and
    /// withdraws, as it happens.
    ///
    /// (Not `-t`, which waits for a "complete" list: avahi-browse 0.8 then never exits when an
    /// instance disappears while it resolves it, avahi/avahi#264, which parallel tests cause.)
    final class Browser: Sendable {
        private let process: BackgroundProcess

        /// Starts browsing for `type`.
        init(_ type: String) throws {
            self.process = try BackgroundProcess(Avahi.browse, ["-rp", type])
        }

        deinit {
            self.process.terminate()
        }

        /// Waits until the instance `name` is resolved, and returns what avahi-browse printed.
        func resolved(_ name: String, timeout: Duration = .seconds(8)) async throws -> Entry {
            let line = try await self.process.waitForLine(timeout: timeout) { Entry(line: $0)?.name == name }
            guard let entry = Entry(line: line) else { throw Unavailable(description: "unreadable line: \(line)") }
            return entry
        }

        /// Waits until the instance `name` is withdrawn (`-;lo;IPv4;name;_crypttest._tcp;local`).
        func removed(_ name: String, timeout: Duration = .seconds(8)) async throws {
            try await self.process.waitForLine(timeout: timeout) { line in
                let fields = line.split(separator: ";", omittingEmptySubsequences: false)
                return fields.count >= 4 && fields[0] == "-" && fields[3] == name
            }
        }
    }
}
