import CLibFuzzer
import LabFuzzMsg

/// One input to the `msg` target (LabFuzzMsg, `MsgTarget`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    MsgTarget.fuzz(data, count)
    return 0
}

/// The process's entry point: SwiftPM links an executable's `main` to `<module>_main`, so
/// libFuzzer's own `main` is not the one that runs; this hands over to libFuzzer's driver.
@_cdecl("fuzz_msg_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
}
