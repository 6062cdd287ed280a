import Foundation
public import Histogram
import LabCore

/// The Prometheus text exposition format (version 0.0.4), written from totals the server
/// already keeps: a scrape reads a snapshot, so serving the page costs the exchanges nothing.
/// (swift-prometheus records observations as they happen; these figures are aggregated
/// already, with HDR histograms the page turns into cumulative buckets.)
public struct PrometheusText: Sendable {
    /// The page so far.
    public private(set) var text = ""

    /// An empty page.
    public init() {}

    /// The upper bounds, in seconds, of the step-time histograms' buckets: 10 µs to 10 s.
    public static let secondsBuckets: [Double] = [
        0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
        1, 2.5, 5, 10,
    ]

    /// A counter family: `name` (ending in `_total`) with one sample per label set.
    public mutating func counter(_ name: String, _ help: String, _ samples: [([(String, String)], UInt64)]) {
        self.family(name, help, type: "counter")
        for (labels, value) in samples { self.sample(name, labels, "\(value)") }
    }

    /// A gauge family.
    public mutating func gauge(_ name: String, _ help: String, _ samples: [([(String, String)], Double)]) {
        self.family(name, help, type: "gauge")
        for (labels, value) in samples { self.sample(name, labels, Self.number(value)) }
    }

    /// A histogram family in seconds, from HDR histograms of nanoseconds: for each label set,
    /// the cumulative count at each of `secondsBuckets`, `+Inf`, the sum and the count.
    public mutating func histogram(_ name: String, _ help: String, _ series: [([(String, String)], Histogram<UInt64>)])
    {
        self.family(name, help, type: "histogram")
        for (labels, histogram) in series {
            var below: [UInt64] = Array(repeating: 0, count: Self.secondsBuckets.count)
            var sum = 0.0
            for bucket in histogram.recordedValues() {
                let seconds = Double(bucket.value) / 1e9
                sum += seconds * Double(bucket.count)
                for (index, bound) in Self.secondsBuckets.enumerated() where seconds <= bound {
                    below[index] += bucket.count
                }
            }
            for (index, bound) in Self.secondsBuckets.enumerated() {
                self.sample(name + "_bucket", labels + [("le", Self.number(bound))], "\(below[index])")
            }
            self.sample(name + "_bucket", labels + [("le", "+Inf")], "\(histogram.totalCount)")
            self.sample(name + "_sum", labels, Self.number(sum))
            self.sample(name + "_count", labels, "\(histogram.totalCount)")
        }
    }

    private mutating func family(_ name: String, _ help: String, type: String) {
        self.text +=
            "# HELP \(name) \(help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n"))\n"
        self.text += "# TYPE \(name) \(type)\n"
    }

    private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        let rendered = labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",")
        self.text += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(rendered)} \(value)\n"
    }

    /// A label value with `\`, `"` and newlines escaped, as the format asks.
    static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A number as Go's strconv writes it for Prometheus: integers without a fraction.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}

extension ServerRecording.Snapshot {
    /// The server's totals as metrics: requests by group (suite or msg/1 op) and outcome
    /// (`ok`, or the error code), step times, and connections by how they ended.
    public func exposition(into page: inout PrometheusText, open: Int) {
        var requests: [([(String, String)], UInt64)] = []
        for group in Set(self.exchanges.keys).union(self.errors.keys).sorted() {
            requests.append(([("group", group), ("outcome", "ok")], self.exchanges[group] ?? 0))
            for (code, count) in (self.errors[group] ?? [:]).sorted(by: { $0.key < $1.key }) {
                requests.append(([("group", group), ("outcome", code)], count))
            }
        }
        page.counter(
            "lab_requests_total",
            "Requests answered, by group (cx/1 suite or msg/1 op) and outcome (ok, or the error code).",
            requests
        )
        var steps: [([(String, String)], Histogram<UInt64>)] = []
        for (group, byStep) in self.steps.sorted(by: { $0.key < $1.key }) {
            for (step, histogram) in byStep.sorted(by: { $0.key.name < $1.key.name }) {
                steps.append(([("group", group), ("step", step.name)], histogram))
            }
        }
        page.histogram("lab_step_seconds", "The server's own step times, by group and step.", steps)
        page.gauge("lab_connections_open", "Connections open now.", [([], Double(open))])
        page.counter(
            "lab_connections_closed_total",
            "Connections ended, by reason.",
            self.closes.sorted { $0.key < $1.key }.map { ([("reason", $0.key)], $0.value) }
        )
        page.counter(
            "lab_busy_refusals_total",
            "Connections answered busy and closed (over --max-connections).",
            [([], self.closes["busy"] ?? 0)]
        )
    }
}
