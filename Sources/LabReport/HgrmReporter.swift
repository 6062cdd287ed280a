public import Foundation
import Histogram
import LabCore
public import LabResults

/// Writes each group's steps as HdrHistogram percentile distributions (`.hgrm`, the text
/// hdrhistogram-swift's `outputPercentileDistribution` writes, in microseconds), one file
/// per group and step under `hgrm/`, for HdrHistogram's plotter and tools that read it.
public struct HgrmReporter: Reporter {
    /// `hgrm`.
    public static let name = "hgrm"
    /// The folder it writes into.
    public static let folderName = "hgrm"

    /// An hgrm reporter; it has no options.
    public init(options: ReportOptions) {}

    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let folder = directory.appendingPathComponent(Self.folderName)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw LabError(.storage, "Cannot create \(folder.path): \(FileReason.describe(error))")
        }
        var written: [URL] = []
        for group in result.groups {
            for entry in group.orderedSteps {
                guard let histogram = group.steps[entry.step], histogram.totalCount > 0 else { continue }
                let url = folder.appendingPathComponent(Self.fileName(group.key, entry.step))
                try writeText(Self.render(histogram), to: url)
                written.append(url)
            }
        }
        return written
    }

    /// `cx_x25519_swift-crypto_in-process_sign.hgrm`: the key's parts and the step, with
    /// anything but letters, digits, `-` and `.` made `_`.
    static func fileName(_ key: GroupKey, _ step: Step) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")
        let name = [key.flow, key.suite, key.provider, key.transport, step.name].joined(separator: "_")
        return String(name.map { allowed.contains($0) ? $0 : "_" }) + ".hgrm"
    }

    /// The distribution's text, values in microseconds.
    static func render(_ histogram: Histogram<UInt64>) -> String {
        var text = ""
        histogram.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1000)
        return text
    }
}
