import Foundation
import LabTesting

/// Avahi's own command-line tools, the independent side of the discovery tests.
enum Avahi {
    /// A resolved instance as `avahi-browse -rp` prints it.
    struct Entry: Equatable {
        var interface: String
        var name: String
        var type: String
        var host: String
        var address: String
        var port: Int
        /// The TXT strings, e.g. `tls=0`.
        var txt: Set<String>
    }

    /// Why a test cannot use Avahi.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    static let browse = URL(fileURLWithPath: "/usr/bin/avahi-browse")
    static let publish = URL(fileURLWithPath: "/usr/bin/avahi-publish-service")

    /// A name no other test or run uses.
    static func uniqueName(_ prefix: String) -> String {
        "lab-\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Throws, telling what to run, unless avahi-daemon answers and avahi-utils is installed.
    static func requireDaemon() throws {
        for tool in [Self.browse, Self.publish] where !FileManager.default.isExecutableFile(atPath: tool.path) {
            throw Unavailable(description: "\(tool.path) is missing: run scripts/setup.sh (it installs avahi-utils)")
        }
        let check = try ChildProcess.run(URL(fileURLWithPath: "/usr/sbin/avahi-daemon"), ["--check"])
        guard check.status == 0 else {
            throw Unavailable(
                description: "avahi-daemon is not running: run scripts/services.sh (as root) to start it and D-Bus"
            )
        }
    }

    /// `avahi-browse -rpt <type>`: the resolved instances the daemon knows now.
    static func resolvedInstances(of type: String) throws -> [Entry] {
        let outcome = try ChildProcess.run(Self.browse, ["-rpt", type])
        guard outcome.status == 0 else {
            throw Unavailable(
                description: "avahi-browse exited with \(outcome.status) (\(outcome.errors)); "
                    + "is avahi-daemon running? scripts/services.sh starts it"
            )
        }
        return outcome.output.split(separator: "\n").compactMap { line in
            // =;lo;IPv4;name;_crypttest._tcp;local;vm.local;127.0.0.1;4242;"proto=cx/1" "tls=0"
            let fields = line.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false)
            guard fields.count == 10, fields[0] == "=", let port = Int(fields[8]) else { return nil }
            return Entry(
                interface: String(fields[1]),
                name: String(fields[3]),
                type: String(fields[4]),
                host: String(fields[6]),
                address: String(fields[7]),
                port: port,
                txt: Self.txtStrings(String(fields[9]))
            )
        }
    }

    /// Browses until the instance `name` is listed (`present`) or gone, at most until `timeout`.
    ///
    /// Returns the instance when waiting for it to be present.
    @discardableResult
    static func waitForInstance(
        named name: String,
        of type: String,
        present: Bool,
        timeout: Duration
    ) throws -> Entry? {
        let deadline = ContinuousClock.now + timeout
        var last: [Entry] = []
        repeat {
            // Each browse waits for the daemon's "all for now", so this loop does not spin.
            last = try Self.resolvedInstances(of: type)
            let entry = last.first { $0.name == name }
            if present, let entry { return entry }
            if !present, entry == nil { return nil }
        } while ContinuousClock.now < deadline
        throw Unavailable(
            description: "avahi-browse -rpt \(type) still \(present ? "lacks" : "lists") '\(name)' after \(timeout); "
                + "it lists: \(last.map(\.name))"
        )
    }

    /// `"a=1" "b"` → `["a=1", "b"]` (avahi-browse quotes each TXT string).
    private static func txtStrings(_ text: String) -> Set<String> {
        var strings: Set<String> = []
        var current: String?
        for character in text {
            if character == "\"" {
                if let string = current {
                    strings.insert(string)
                    current = nil
                } else {
                    current = ""
                }
            } else if current != nil {
                current?.append(character)
            }
        }
        return strings
    }
}
