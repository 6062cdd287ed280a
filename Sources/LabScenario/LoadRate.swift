import LabCore

/// An open load's `rate` as written: exchanges per second (a number, `300`), or a share of
/// what the same clients carry back to back (`"70% of capacity"`), which the lab finds by a
/// short closed probe before the run (`LoadSpec.capacityShare`).
public enum LoadRate: Sendable, Equatable, Decodable {
    /// Exchanges per second, over all clients.
    case perSecond(Double)
    /// A share of the capacity, above 0 and at most 1.
    case shareOfCapacity(Double)

    /// What a valid rate looks like, for messages.
    public static let expectation =
        "a rate above 0 and at most 1000000 per second, or a share of what the clients carry such as "
        + "\"70% of capacity\" (above 0%, at most 100%)"

    /// Parses `"P% of capacity"` (words apart by spaces), P above 0 and at most 100.
    public init?(parsing text: String) {
        guard let share = Share(parsing: text) else { return nil }
        self = .shareOfCapacity(share.value)
    }

    /// Decodes a number, or a string `"P% of capacity"` (a bad one says what a rate may be).
    public init(from decoder: any Decoder) throws {
        if let number = try? decoder.singleValueContainer().decode(Double.self) {
            self = .perSecond(number)
        } else {
            self = .shareOfCapacity(try Share(from: decoder).value)
        }
    }

    /// The string form, parsed as `ScenarioString`s are.
    private struct Share: ScenarioString {
        static var expectation: String { LoadRate.expectation }
        let value: Double

        init?(parsing text: String) {
            let words = text.split(separator: " ")
            guard words.count == 3, words[1] == "of", words[2] == "capacity", words[0].hasSuffix("%"),
                let percent = Double(words[0].dropLast()), percent.isFinite, percent > 0, percent <= 100
            else { return nil }
            self.value = percent / 100
        }
    }

    /// Whether the rate is in range: a rate per second above 0 and at most 1,000,000 (a
    /// share is checked when parsed).
    public var isValid: Bool {
        switch self {
        case .perSecond(let rate): rate > 0 && rate <= 1_000_000
        case .shareOfCapacity: true
        }
    }
}
