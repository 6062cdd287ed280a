/// Pads a process's arguments and environment to a fixed alignment, for counted runs
/// (`lab run --counted`).
///
/// The kernel, and Valgrind after it, copies a process's arguments and environment strings
/// to the top of its stack; everything the process then puts on the stack lies below them.
/// Their length therefore moves the alignment of every stack buffer, and with it the
/// instructions `memcpy` and vector code take: in one build, an `--out` path of another
/// length moved x25519 `encode` from 356,969 instructions to 358,241 (+0.36%), `decode` by
/// −0.25% and `encrypt` by +0.20% (2026-11-24), against a gate allowance of 1%. A checkout
/// in another folder, or CI's own variables, would do the same between the machine that
/// recorded the gate's baseline and CI. Padded, runs with four different command lines and
/// environments counted those steps alike to the instruction.
public enum StackPadding {
    /// The variable that pads.
    public static let variable = "LAB_COUNTED_PAD"
    /// What the strings are padded to a multiple of: a page, so every offset within one
    /// is kept.
    public static let alignment = 4_096

    /// The bytes `arguments` (the program's path first) and `environment` take at the top
    /// of the stack: each string with its terminating NUL, a variable as `NAME=value`.
    public static func size(arguments: [String], environment: [String: String]) -> Int {
        arguments.reduce(0) { $0 + $1.utf8.count + 1 }
            + environment.reduce(0) { $0 + $1.key.utf8.count + 1 + $1.value.utf8.count + 1 }
    }

    /// `environment` with `variable` set (replaced if it was there) to the run of `x`s that
    /// makes `size(arguments:environment:)` a multiple of `alignment`, plus `offset` bytes
    /// (0 to `alignment` − 1: `lab run --counted --layout N` moves the stack by 16·N).
    public static func padded(_ environment: [String: String], arguments: [String], offset: Int = 0) -> [String: String] {
        var environment = environment
        environment[Self.variable] = ""
        let unpadded = Self.size(arguments: arguments, environment: environment)
        let count = ((offset - unpadded) % Self.alignment + Self.alignment) % Self.alignment
        environment[Self.variable] = String(repeating: "x", count: count)
        return environment
    }
}
