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

/// One stage of a load with `stages`, held for `duration`: a plateau of arrival `rate` (open
/// model) or of `clients` running back to back (closed model).
public struct LoadStage: Sendable, Decodable, Equatable {
    /// Open: new exchanges per second, over all clients (0 in a closed load's stage).
    public var rate: Double
    /// Closed: the clients that run in the stage, the first ones of `clients.count` (0 in an
    /// open load's stage).
    public var clients: Int
    /// How long the stage lasts.
    public var duration: TimeSpan

    static let keys = ["rate", "clients", "duration"]

    /// An open load's stage.
    public init(rate: Double, duration: TimeSpan) {
        self.rate = rate
        self.clients = 0
        self.duration = duration
    }

    /// A closed load's stage.
    public init(clients: Int, duration: TimeSpan) {
        self.rate = 0
        self.clients = clients
        self.duration = duration
    }

    /// Decodes strictly; which of `rate` and `clients` the model wants, `LoadSpec` checks.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        // Given but wrong: -1, already a problem (0 means absent).
        self.rate =
            object.optional(
                "rate",
                expected: "a rate above 0 and at most 1000000 per second",
                isValid: { $0 > 0 && $0 <= 1_000_000 }
            ) ?? (object.contains("rate") ? -1 : 0)
        self.clients =
            object.optional(
                "clients",
                expected: "a count of clients from 1 to \(ClientsSpec.maximumCount)",
                isValid: { (1...ClientsSpec.maximumCount).contains($0) }
            ) ?? (object.contains("clients") ? -1 : 0)
        self.duration =
            object.required("duration", expected: "a duration above zero, such as \"5 s\"", isValid: { $0 > .zero })
            ?? .seconds(1)
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
    /// Open: new exchanges per second, over all clients. With `capacityShare`, set from the
    /// capacity probe before the run (`CapacityProbe`).
    public var rate: Double = 0
    /// Open: the rate as a share of what the same clients carry back to back (`"rate": "70% of
    /// capacity"`); nil: `rate` as written.
    public var capacityShare: Double? = nil
    /// Open, with `capacityShare`: what the probe found, once it ran; nil before.
    public var probed: CapacityFinding? = nil
    /// Open: how long exchanges keep starting. Idle: how long every client holds its
    /// connections once all are connected.
    public var duration: TimeSpan = .zero
    /// Open: the first part of `duration`, left out of the results.
    public var warmup: TimeSpan = .zero
    /// Both: the run stops cleanly, keeping what it measured, once this much time has passed.
    public var deadline: TimeSpan = .seconds(600)
    /// Open: plateaus of arrival rate, one after another after the warm-up (which runs at the
    /// first stage's rate), instead of one `rate` for `duration`; each stage is measured on
    /// its own, for the capacity report. Empty: one rate.
    public var stages: [LoadStage] = []
    /// Open, with stages: the p99 a stage must stay under (with no errors and its arrivals
    /// served) to count as sustained; the capacity report's knee is where it stops being so.
    public var kneeP99: TimeSpan? = nil

    static let keys = [
        "model", "iterations", "warmupIterations", "rounds", "rate", "duration", "warmup", "stages", "kneeP99",
        "deadline",
    ]
    static let closedOnly = ["iterations", "warmupIterations", "rounds"]
    static let openOnly = ["rate", "duration"]
    /// Keys of the closed model only with `stages`, and of the open model.
    static let staged = ["warmup", "stages", "kneeP99"]

    /// The parameters that `model` does not take.
    static func foreign(to model: LoadModel) -> [String] {
        switch model {
        case .closed: Self.openOnly
        case .open: Self.closedOnly
        case .idle: Self.closedOnly + ["rate"] + Self.staged
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
        self.warmup = object.optional("warmup", expected: TimeSpan.expectation) ?? self.warmup
        if self.model == .closed, !object.contains("stages"), object.contains("warmup") {
            object.problem(
                "warmup",
                "only with \"stages\" in the closed model (without them, warm up with warmupIterations)"
            )
        }
        if self.model != .idle, !object.contains("stages"), object.contains("kneeP99") {
            object.problem("kneeP99", "only with \"stages\": the knee is between stages")
        }
        if self.model != .idle, object.contains("stages") {
            self.decodeStages(object)
        } else if self.model == .open {
            switch object.required("rate", as: LoadRate.self, expected: LoadRate.expectation, isValid: \.isValid) {
            case .perSecond(let rate): self.rate = rate
            case .shareOfCapacity(let share):
                self.capacityShare = share
                self.rate = 1
            case nil: self.rate = 1
            }
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
        if self.model == .open, self.stages.isEmpty, self.warmup >= self.duration, self.duration > .zero {
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
        if self.model == .open, self.stages.isEmpty, self.capacityShare == nil, object.contains("rate"),
            object.contains("duration")
        {
            let measured = self.rate * (self.duration.seconds - self.warmup.seconds)
            if measured < 1 {
                object.problem(
                    "rate",
                    "expected rate × (duration − warmup) of at least one measured exchange, found \(TimeSpan.trimmed(self.rate))/s for \(self.duration) (warm-up \(self.warmup))"
                )
            }
        }
        if self.model == .open || !self.stages.isEmpty, self.duration >= self.deadline, self.duration > .zero {
            object.problem(
                "deadline",
                "expected a deadline after the \(self.model.rawValue) model's duration (\(self.duration)), found \"\(self.deadline)\""
            )
        }
    }

    /// The open model's schedule: when each exchange of the run is due.
    public var schedule: OpenSchedule { OpenSchedule(self) }

    /// `stages`, with `kneeP99`: the run's `rate` is the first stage's (the warm-up's), its
    /// `duration` the warm-up and every stage; `rate` and `duration` themselves are refused,
    /// and in the closed model so are `iterations`, `warmupIterations` and `rounds` (a stage
    /// runs for its time). An open stage has a `rate`, a closed one `clients`.
    private mutating func decodeStages(_ object: ScenarioObject) {
        let own = self.model == .open ? "rate" : "clients"
        for key in ["rate", "duration"] + (self.model == .closed ? Self.closedOnly : []) where object.contains(key) {
            object.problem(key, "not with \"stages\": each stage has its \(own) and duration")
        }
        self.stages =
            object.optional(
                "stages",
                expected: "1 to 100 stages, each { \"rate\": per second, \"duration\": \"5 s\" }",
                isValid: { (1...100).contains($0.count) }
            ) ?? []
        self.kneeP99 = object.optional(
            "kneeP99",
            expected: "a p99 above zero, such as \"20 ms\"",
            isValid: { $0 > .zero }
        )
        for (index, stage) in self.stages.enumerated() {
            let path = object.codingPath + [AnyCodingKey("stages"), AnyCodingKey(intValue: index)]
            if self.model == .open, stage.clients != 0 {
                object.log.add(
                    path + [AnyCodingKey("clients")],
                    "only in a closed load's stages; an open stage has a rate"
                )
            }
            if self.model == .closed, stage.rate != 0 {
                object.log.add(
                    path + [AnyCodingKey("rate")],
                    "only in an open load's stages; a closed stage has clients"
                )
            }
            if (self.model == .open ? stage.rate : Double(stage.clients)) == 0 {
                object.log.add(
                    path + [AnyCodingKey(own)],
                    "missing; expected \(self.model == .open ? "a rate per second" : "a count of clients")"
                )
            }
        }
        guard let first = self.stages.first else {
            self.rate = 1
            self.duration = .seconds(1)
            return
        }
        self.rate = first.rate
        let total = self.stages.reduce(self.warmup.nanoseconds) { $0 + $1.duration.nanoseconds }
        self.duration = TimeSpan(nanoseconds: total)
    }
}

/// What a capacity probe found (`LoadSpec.capacityShare`): the rate the clients carried back
/// to back, over how long, and the rate the run then takes.
public struct CapacityFinding: Sendable, Equatable {
    /// Exchanges per second the clients carried in the probe's measured part.
    public var carried: Double
    /// The probe's measured part, after its warm-up (the rate divides by its measured length).
    public var duration: TimeSpan
    /// The clients that ran in it.
    public var clients: Int

    /// A finding.
    public init(carried: Double, duration: TimeSpan, clients: Int) {
        self.carried = carried
        self.duration = duration
        self.clients = clients
    }
}

/// When each exchange of an open load is due, from the schedule's start: one rate for the
/// whole duration, or the warm-up at the first stage's rate, then each stage at its own.
public struct OpenSchedule: Sendable, Equatable {
    /// A stretch of the schedule at one rate: its start (nanoseconds from the schedule's
    /// start), its first exchange's number, how many exchanges it has, and its rate.
    public struct Segment: Sendable, Equatable {
        public var offset: UInt64
        public var first: Int
        public var count: Int
        public var rate: Double
        public var duration: UInt64
    }

    /// The segments in order; with stages, the warm-up (if any) then one per stage.
    public let segments: [Segment]
    /// Exchanges due before the warm-up's end.
    public let warmupExchanges: Int

    init(_ load: LoadSpec) {
        guard !load.stages.isEmpty else {
            // One rate: exchange j is due at j / rate, for every j / rate < duration.
            let count = Int((load.rate * load.duration.seconds).rounded(.down))
            self.segments = [
                Segment(offset: 0, first: 0, count: count, rate: load.rate, duration: load.duration.nanoseconds)
            ]
            self.warmupExchanges = min(count, Int((load.rate * load.warmup.seconds).rounded(.up)))
            return
        }
        var segments: [Segment] = []
        var offset: UInt64 = 0
        var first = 0
        let warmup = load.warmup > .zero ? [LoadStage(rate: load.stages[0].rate, duration: load.warmup)] : []
        // (Open loads only: a closed load's stages are run by time, `StagedClosedLoad`.)
        let parts = warmup + load.stages
        for part in parts {
            let count = Int((part.rate * part.duration.seconds).rounded(.down))
            segments.append(
                Segment(
                    offset: offset,
                    first: first,
                    count: count,
                    rate: part.rate,
                    duration: part.duration.nanoseconds
                )
            )
            offset += part.duration.nanoseconds
            first += count
        }
        self.segments = segments
        self.warmupExchanges = load.warmup > .zero ? segments[0].count : 0
    }

    /// Every exchange of the run.
    public var total: Int { self.segments.last.map { $0.first + $0.count } ?? 0 }

    /// When exchange `sequence` is due, in nanoseconds from the schedule's start.
    public func offset(of sequence: Int) -> UInt64 {
        let segment = self.segments.last { $0.first <= sequence } ?? self.segments[0]
        return segment.offset &+ UInt64((Double(sequence - segment.first) / segment.rate * 1e9).rounded())
    }
}
