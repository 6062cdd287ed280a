import Foundation
public import LabCore

/// `"clients"`: how many simulated clients, and how fast they start.
public struct ClientsSpec: Sendable, Decodable {
    /// The number of simulated clients (one task each).
    public var count: Int = 1
    /// Clients start evenly spread over this span.
    public var rampUp: TimeSpan = .zero

    static let keys = ["count", "rampUp"]
    /// The most clients a scenario may ask for.
    public static let maximumCount = 100_000

    /// The defaults.
    public init(count: Int = 1, rampUp: TimeSpan = .zero) {
        self.count = count
        self.rampUp = rampUp
    }

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.count =
            object.optional(
                "count",
                expected: "an integer from 1 to \(Self.maximumCount)",
                isValid: { (1...Self.maximumCount).contains($0) }
            ) ?? self.count
        self.rampUp = object.optional("rampUp", expected: TimeSpan.expectation) ?? self.rampUp
    }
}

/// The load models.
public enum LoadModel: String, Sendable, Codable, CaseIterable {
    /// Each client runs its iterations back to back.
    case closed
    /// New exchanges start at a target rate, whatever the server's pace.
    case open
    /// Each client connects and sets itself up (`prepare`), then holds its connections idle
    /// for `duration` once every client is connected: the per-client memory footprint.
    case idle
}

/// `"load"`: the load model and its parameters.
public struct LoadSpec: Sendable, Decodable {
    /// `closed` (default) or `open`.
    public var model: LoadModel = .closed
    /// Closed: measured iterations per client.
    public var iterations: Int = 100
    /// Closed: iterations per client run first and left out of the results.
    public var warmupIterations: Int = 0
    /// Closed: the measured iterations fall into this many rounds. Every client finishes a
    /// round before any starts the next, and the lab times its calibration operations in
    /// between, so each round is one repeated sample of every step (what `lab check`
    /// tests over). 1 (the default) is one uninterrupted run.
    public var rounds: Int = 1
    /// Open: new exchanges per second, over all clients.
    public var rate: Double = 0
    /// Open: how long exchanges keep starting. Idle: how long every client holds its
    /// connections once all are connected.
    public var duration: TimeSpan = .zero
    /// Open: the first part of `duration`, left out of the results.
    public var warmup: TimeSpan = .zero
    /// Both: the run stops cleanly, keeping what it measured, once this much time has passed.
    public var deadline: TimeSpan = .seconds(600)

    static let keys = ["model", "iterations", "warmupIterations", "rounds", "rate", "duration", "warmup", "deadline"]
    static let closedOnly = ["iterations", "warmupIterations", "rounds"]
    static let openOnly = ["rate", "duration", "warmup"]

    /// The parameters that `model` does not take.
    static func foreign(to model: LoadModel) -> [String] {
        switch model {
        case .closed: Self.openOnly
        case .open: Self.closedOnly
        case .idle: Self.closedOnly + ["rate", "warmup"]
        }
    }

    /// The models that take the parameter `key`, in words: `the open and idle models`.
    static func models(taking key: String) -> String {
        let models = LoadModel.allCases.filter { !Self.foreign(to: $0).contains(key) }.map(\.rawValue)
        let listed = models.count > 1 ? models.dropLast().joined(separator: ", ") + " and " + models.last! : models[0]
        return "the \(listed) model\(models.count > 1 ? "s" : "")"
    }

    /// A closed model.
    public static func closed(iterations: Int, warmupIterations: Int = 0) -> LoadSpec {
        var spec = LoadSpec()
        spec.iterations = iterations
        spec.warmupIterations = warmupIterations
        return spec
    }

    /// An idle model: connect, then hold the connections for `duration`.
    public static func idle(duration: TimeSpan) -> LoadSpec {
        var spec = LoadSpec()
        spec.model = .idle
        spec.duration = duration
        return spec
    }

    /// An open model.
    public static func open(rate: Double, duration: TimeSpan, warmup: TimeSpan = .zero) -> LoadSpec {
        var spec = LoadSpec()
        spec.model = .open
        spec.rate = rate
        spec.duration = duration
        spec.warmup = warmup
        return spec
    }

    /// The defaults: closed, 100 iterations per client.
    public init() {}

    /// Decodes strictly; parameters of the other model are problems.
    ///
    /// Longer than the functions around it, on purpose: one line per key of the document,
    /// in the order docs/scenarios.md lists them, each with the value it expects, so that
    /// the decoder reads as the reference does.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        let model: LoadModel? = object.optional("model", expected: "\"closed\", \"open\" or \"idle\"")
        self.model = model ?? self.model
        // With a model that did not decode, which parameters are foreign is unknown.
        for key in Self.foreign(to: self.model)
        where object.contains(key) && (model != nil || !object.contains("model")) {
            object.problem(key, "only for \(Self.models(taking: key)); this load is \(self.model.rawValue)")
        }
        self.iterations =
            object.optional(
                "iterations",
                expected: "an integer from 1 to 100000000",
                isValid: { (1...100_000_000).contains($0) }
            )
            ?? self.iterations
        self.warmupIterations =
            object.optional(
                "warmupIterations",
                expected: "an integer from 0 to 1000000",
                isValid: { (0...1_000_000).contains($0) }
            )
            ?? self.warmupIterations
        self.rounds =
            object.optional(
                "rounds",
                expected: "an integer from 1 to 1000, at most the iterations",
                isValid: { (1...1000).contains($0) }
            )
            ?? self.rounds
        if self.rounds > self.iterations {
            object.problem(
                "rounds",
                "expected at most as many rounds as iterations (\(self.iterations)), found \(self.rounds)"
            )
        }
        if self.model == .open {
            self.rate =
                object.required(
                    "rate",
                    expected: "a rate above 0 and at most 1000000 per second",
                    isValid: { $0 > 0 && $0 <= 1_000_000 }
                )
                ?? 1
            self.duration =
                object.required("duration", expected: "a duration above zero, such as \"10s\"", isValid: { $0 > .zero })
                ?? .seconds(1)
        }
        if self.model == .idle {
            self.duration =
                object.required(
                    "duration",
                    expected: "how long the connected clients stay idle, a duration above zero such as \"5s\"",
                    isValid: { $0 > .zero }
                ) ?? .seconds(1)
        }
        self.warmup = object.optional("warmup", expected: TimeSpan.expectation) ?? self.warmup
        if self.model == .open, self.warmup >= self.duration, self.duration > .zero {
            object.problem(
                "warmup",
                "expected a warm-up shorter than the duration (\(self.duration)), found \"\(self.warmup)\""
            )
        }
        self.deadline =
            object.optional("deadline", expected: "a duration above zero", isValid: { $0 > .zero }) ?? self.deadline
        if self.model == .idle, object.contains("duration"), self.duration > .zero, self.duration >= self.deadline {
            object.problem(
                "deadline",
                "expected a deadline after the idle model's duration (\(self.duration)), found \"\(self.deadline)\""
            )
        }
        if self.model == .open, object.contains("rate"), object.contains("duration") {
            let measured = self.rate * (self.duration.seconds - self.warmup.seconds)
            if measured < 1 {
                object.problem(
                    "rate",
                    "expected rate × (duration − warmup) of at least one measured exchange, found \(TimeSpan.trimmed(self.rate))/s for \(self.duration) (warm-up \(self.warmup))"
                )
            }
            if self.duration >= self.deadline {
                object.problem(
                    "deadline",
                    "expected a deadline after the open model's duration (\(self.duration)), found \"\(self.deadline)\""
                )
            }
        }
    }
}
