import Foundation
import LabCore
import LabMessaging
import LabTesting
import LabWire
import NIOCore
import NIOPosix
import Testing

/// Issue 51, break 4: whole frames pipelined ahead of their answers bypassed
/// `--max-buffered-bytes`, which counted only frames still arriving. The trial: a 32 MiB
/// budget, 24 connections each sending 40 whole 1 MiB requests and never reading, the
/// server grew by 202–355 MiB and logged no `busy`. Now a frame is held against the budget
/// until its answer is written.
@Suite(.tier(.integration), .timeLimit(.minutes(3)))
struct PipelinedFrameBudgetTests {
    static let budget = 32 << 20

    @Test("24 connections pipelining 40 whole 1 MiB requests each, never reading: held within the budget")
    func pipelinedFramesStayWithinTheBudget() async throws {
        let (server, address) = try await LabProcess.serve([
            "--max-buffered-bytes", "\(Self.budget)", "--idle-timeout", "5 s",
        ])
        defer { server.terminate() }
        _ = try await server.line(startingWith: "connections: at most", timeout: .seconds(5))
        let before = try ProcessFigures.peakResident(server.pid)
        // A captcha request padded to 1 MiB under a key the server never reads.
        var plist = PropertyListDictionary()
        plist.set(MsgKey.op, string: "captcha")
        plist.set("pad", string: String(repeating: "A", count: 1 << 20))
        let body = try plist.encoded()
        var requests = ByteBuffer()
        for _ in 0..<40 {
            requests.writeInteger(UInt32(body.count), endianness: .big)
            requests.writeBytes(body)
        }
        var channels: [any Channel] = []
        defer { for channel in channels { channel.close(promise: nil) } }
        for _ in 0..<24 {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.autoRead, value: false)
                .connect(host: address.host, port: address.port)
                .get()
            channel.writeAndFlush(requests, promise: nil)
            channels.append(channel)
        }
        try await server.errors(containing: "past their budget of \(Self.budget) bytes", timeout: .seconds(60))
        // Every connection ends: past the budget at once, the rest at the idle timeout once
        // the server stops reading them.
        let ended = try await ProcessFigures.until(.seconds(90)) { channels.allSatisfy { !$0.isActive } }
        #expect(ended, "\(channels.filter(\.isActive).count) of 24 still open")
        // Frames held (the budget, twice it with NIO's doubling buffers), and answers queued
        // to the non-readers.
        let growth = try ProcessFigures.peakResident(server.pid) - before
        #expect(growth <= 2 * Self.budget + (48 << 20), "peak resident grew \(growth >> 20) MiB; budget \(Self.budget >> 20) MiB")
        print("pipelined frames: peak resident grew \(growth >> 20) MiB under a \(Self.budget >> 20) MiB budget")
    }
}
