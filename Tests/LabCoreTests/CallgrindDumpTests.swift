import Foundation
import LabCore
import LabTestSupport
import Testing

/// How a counted run reads callgrind's dumps (`WorkCounter.parse`): the instructions, the
/// calls into the allocator, and the allocator's own instructions, which a step's count
/// leaves out.
@Suite(.tier(.unit)) struct CallgrindDumpTests {
    /// A dump in callgrind's format as `lab run --counted` has it written
    /// (`--compress-strings=no --dump-instr=no --dump-line=yes`), 10,000 instructions in all.
    static let dump = """
        # callgrind format
        version: 1
        creator: callgrind-3.19.0
        cmd: lab run
        positions: line
        events: Ir
        summary: 10000

        ob=/usr/lib/x86_64-linux-gnu/libc.so.6
        fl=???
        fn=malloc
        0 120
        cfn=_int_malloc
        calls=2 0
        0 480

        fn=realloc'2
        0 40
        cfn=malloc
        calls=1 0
        0 90

        ob=lab
        fl=Sources/LabWire/Frame.swift
        fn=$s7LabWire5FrameV6decodeyyF
        12 2000
        cfn=malloc
        calls=3 0
        13 600
        cfn=free
        calls=3 0
        14 300
        cfn=$s7LabWire3sha
        calls=1 0
        15 2500
        cfn=realloc'2
        calls=1 0
        16 130

        fn=swift_slowAlloc
        20 30
        cfn=malloc'2
        calls=2 0
        21 150
        """

    @Test("The allocator's instructions are what calls into it cost from outside it; every allocating call is counted")
    func allocatorLeftOut() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callgrind-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: file) }
        try Self.dump.write(to: file, atomically: true, encoding: .utf8)
        let counts = try #require(WorkCounter.parse(dump: file.path))
        #expect(counts.instructions == 10_000)
        // malloc 600 + free 300 + realloc 130 from Frame.decode, malloc'2 150 from
        // swift_slowAlloc; not malloc's own call to _int_malloc, nor realloc's to malloc
        // (inside the allocator, already in the 130).
        #expect(counts.allocatorInstructions == 1_180)
        // Every edge into an allocating entry point: 1 (realloc → malloc) + 3 + 1 + 2.
        #expect(counts.allocations == 7)
    }

    @Test("libdispatch's internals are left out: their own instructions and what they call, the allocator aside")
    func dispatchLeftOut() throws {
        // The manager thread's timer firing inside a step, as a counted run's dump had it
        // (1,426 instructions in all there), beside the step's own work.
        let dump = """
            events: Ir
            summary: 5000

            ob=lab
            fn=$s7LabWire5FrameV6decodeyyF
            12 3000
            cfn=_dispatch_async_f
            calls=1 0
            13 40

            ob=libdispatch.so
            fn=_dispatch_mgr_invoke
            0 100
            cfn=_dispatch_event_loop_drain'2
            calls=1 0
            0 700
            cfn=epoll_wait
            calls=1 0
            0 80
            cfn=malloc
            calls=1 0
            0 50

            fn=_dispatch_event_loop_drain'2
            0 300
            cfn=__tls_get_addr
            calls=2 0
            0 77
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callgrind-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: file) }
        try dump.write(to: file, atomically: true, encoding: .utf8)
        let counts = try #require(WorkCounter.parse(dump: file.path))
        // Their own 100 + 300, and their calls out: epoll_wait 80, __tls_get_addr 77. Not the
        // call from one to the other (its parts are already counted), not the malloc (the
        // allocator's), not the step's own 3,000, nor the 40 of its call into libdispatch's
        // entry point (the step asked for that work).
        #expect(counts.dispatchInstructions == 557)
        #expect(counts.allocatorInstructions == 50 && counts.allocations == 1)
        #expect(counts.instructions == 5_000)
    }

    @Test("A dump without a summary line, or no file, reads as nothing")
    func unreadable() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callgrind-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: file) }
        try "events: Ir\nfn=main\n0 5\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(WorkCounter.parse(dump: file.path) == nil)
        #expect(WorkCounter.parse(dump: file.path + ".missing") == nil)
    }
}
