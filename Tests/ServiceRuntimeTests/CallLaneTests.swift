import HTTPTypes
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing

@testable import ServiceRuntime

/// Call lanes in memory: a caller's end and a callee's whose writers feed each other's readers.
@Suite(.timeLimit(.minutes(2)), .tags(.fast)) struct CallLaneTests {
    static let frames: [CallFrame] = [
        .call(
            id: 3, CallHead(method: .post, target: "/data/Person?x=é", headers: [.contentType: "application/json"]),
            body: ByteBuffer(string: "{}")),
        .answer(
            id: 3, AnswerHead(status: 201, headers: [.sessionsChanged: "u1"]), part: ByteBuffer(string: "[1]"),
            fin: true),
        .answer(id: 4, AnswerHead(status: 200, headers: [:]), part: ByteBuffer(repeating: 1, count: 3_000), fin: false),
        .part(id: 4, ByteBuffer(repeating: 2, count: 10), fin: false),
        .part(id: 4, ByteBuffer(), fin: true),
        .credit(id: 4, bytes: 65_536),
        .cancel(id: 5),
        .failed(id: 6),
        .heartbeat,
        .finish,
    ]

    @Test(arguments: [1, 5, 64, 100_000])
    func everyFrameSurvivesTheWireInPiecesOfAnySize(piece: Int) throws {
        var wire = ByteBuffer()
        for frame in Self.frames { frame.encode(into: &wire) }
        var decoder = LaneFrameDecoder<CallFrame>(maximumPayload: 1 << 16)
        var decoded: [CallFrame] = []
        while wire.readableBytes > 0 {
            decoder.append(wire.readSlice(length: min(piece, wire.readableBytes))!)
            while let frame = try decoder.next() { decoded.append(frame) }
        }
        #expect(decoded.map(Self.describe) == Self.frames.map(Self.describe))
    }

    @Test func aFrameNamingAnInvalidHeaderIsRefused() throws {
        var wire = ByteBuffer()
        CallFrame.write(1, 9, into: &wire) { payload in
            LaneText.write("GET", into: &payload)
            LaneText.write("/x", into: &payload)
            LaneText.write([(name: "bad name", value: "v")], into: &payload)
        }
        var decoder = LaneFrameDecoder<CallFrame>(maximumPayload: 1 << 16)
        decoder.append(wire)
        #expect(throws: SocketStreamError.malformed) { try decoder.next() }
    }

    private static func describe(_ frame: CallFrame) -> String {
        func fields(_ headers: HTTPFields) -> String { headers.map { "\($0.name)=\($0.value)" }.joined(separator: ",") }
        switch frame {
        case .call(let id, let head, let body):
            return "call \(id) \(head.method) \(head.target) \(fields(head.headers)) \(String(buffer: body))"
        case .answer(let id, let head, let part, let fin):
            return "answer \(id) \(head.status) \(fields(head.headers)) \(part.readableBytes) \(fin)"
        case .part(let id, let part, let fin): return "part \(id) \(part.readableBytes) \(fin)"
        case .credit(let id, let bytes): return "credit \(id) \(bytes)"
        case .cancel(let id): return "cancel \(id)"
        case .failed(let id): return "failed \(id)"
        case .heartbeat: return "heartbeat"
        case .finish: return "finish"
        }
    }

    /// What the callee's calls did.
    final class Record: Sendable {
        private let state = Mutex((partsSent: 0, cancelled: 0))
        func sent() { state.withLock { $0.partsSent += 1 } }
        func cancelled() { state.withLock { $0.cancelled += 1 } }
        var partsSent: Int { state.withLock { $0.partsSent } }
        var cancellations: Int { state.withLock { $0.cancelled } }
    }

    /// A caller's end and a callee's end serving `/echo` (the body back, whole), `/parts?n=N`
    /// (N parts of 64 KiB, the i-th filled with i), `/silent` (never answers), `/broken` (one
    /// part, then a failure).
    struct Pair {
        let caller = CallLane()
        let record = Record()
        let callee: CalleeLane

        init() {
            let record = record
            callee = CalleeLane(maximumPayload: 1 << 20) { call, head, body in
                await Self.serve(call, head, body, record: record)
            }
        }

        func start() {
            Task { [caller, callee] in try await callee.readFrames(from: caller.writer) }
            Task { [caller, callee] in try await caller.readFrames(from: callee.writer) }
        }

        private static func serve(_ call: ServedCall, _ head: CallHead, _ body: ByteBuffer, record: Record) async {
            let sender = AnswerSender(call)
            sender.head = AnswerHead(status: 200, headers: [HTTPField.Name("x-method")!: head.method.rawValue])
            do {
                switch head.target.split(separator: "?").first {
                case "/echo":
                    try await sender.write(body)
                case "/parts":
                    let count = Int(head.target.split(separator: "=").last!)!
                    for index in 0..<count {
                        try await sender.write(ByteBuffer(repeating: UInt8(index), count: CallFrame.largestPart))
                        record.sent()
                    }
                case "/broken":
                    try await sender.write(ByteBuffer(repeating: 1, count: CallFrame.largestPart))
                    try await sender.write(ByteBuffer(repeating: 1, count: 10))
                    throw CancellationError()
                default:
                    try await Task.sleep(for: .seconds(3_600))
                }
                try await sender.finish()
            } catch {
                if Task.isCancelled { record.cancelled() }
                await sender.fail()
            }
        }

        func call(_ target: String, method: HTTPRequest.Method = .get, body: String = "") -> CallTicket? {
            caller.start(CallHead(method: method, target: target, headers: [:]), body: ByteBuffer(string: body))
        }
    }

    private static let soon = NIODeadline.now() + .seconds(60)
    private static var loop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }

    @Test func aSmallAnswerArrivesWholeWithItsHead() async throws {
        let pair = Pair()
        pair.start()
        let ticket = try #require(pair.call("/echo", method: .post, body: #"{"name":"é"}"#))
        let head = try await ticket.head(by: Self.soon, on: Self.loop)
        #expect(head.status == 200 && head.headers[HTTPField.Name("x-method")!] == "POST")
        let body = try #require(ticket.wholeBody())
        #expect(String(buffer: body) == #"{"name":"é"}"#)
        await until { pair.callee.count == 0 }
    }

    /// The callee sends at most the window ahead of the taker; taking parts returns credit,
    /// and every part arrives, in order.
    @Test func creditBoundsALargeAnswerAndEveryPartArrivesInOrder() async throws {
        let pair = Pair()
        pair.start()
        let count = 12
        let ticket = try #require(pair.call("/parts?n=\(count)"))
        _ = try await ticket.head(by: Self.soon, on: Self.loop)
        let fitting = CreditWindow.size / CallFrame.largestPart
        await until { pair.record.partsSent >= fitting }
        // Nothing more may move until a part is taken (one more part is held back unsent).
        try await Task.sleep(for: .milliseconds(300))
        #expect(pair.record.partsSent <= fitting + 1)
        #expect(ticket.wholeBody() == nil)
        var index = 0
        for try await part in ticket.parts {
            #expect(part.readableBytes == CallFrame.largestPart)
            #expect(part.getInteger(at: part.readerIndex, as: UInt8.self) == UInt8(index), "part \(index)")
            index += 1
        }
        #expect(index == count)
    }

    @Test func droppingATicketBeforeTheAnswerEndsCancelsTheCallee() async throws {
        let pair = Pair()
        pair.start()
        var ticket = pair.call("/silent")
        await until { pair.callee.count == 1 }
        #expect(ticket != nil)
        ticket = nil
        await until { pair.record.cancellations == 1 && pair.callee.count == 0 }

        var large = pair.call("/parts?n=40")
        _ = try await large?.head(by: Self.soon, on: Self.loop)
        #expect(large != nil)
        large = nil
        await until { pair.record.cancellations == 2 && pair.callee.count == 0 }
        #expect(pair.record.partsSent < 40)
    }

    @Test func aHeadLateForItsDeadlineFailsTheCallAndCancelsTheCallee() async throws {
        let pair = Pair()
        pair.start()
        var ticket = pair.call("/silent")
        await #expect(throws: PendingCall.Failure.deadline) {
            try await ticket?.head(by: .now() + .milliseconds(50), on: Self.loop)
        }
        await until { pair.callee.count == 1 }
        #expect(pair.record.cancellations == 0)
        ticket = nil
        await until { pair.record.cancellations == 1 && pair.callee.count == 0 }
    }

    @Test func anAnswerFailingMidwayFailsItsBody() async throws {
        let pair = Pair()
        pair.start()
        let ticket = try #require(pair.call("/broken"))
        #expect(try await ticket.head(by: Self.soon, on: Self.loop).status == 200)
        await #expect(throws: PendingCall.Failure.failed) {
            for try await _ in ticket.parts {}
        }
    }

    @Test func aLaneEndingLosesItsCallsAndTakesNoMore() async throws {
        let pair = Pair()
        pair.start()
        let ticket = try #require(pair.call("/silent"))
        await until { pair.callee.count == 1 }
        pair.callee.close()
        await #expect(throws: PendingCall.Failure.lost) { try await ticket.head(by: Self.soon, on: Self.loop) }
        await until { pair.caller.isClosed && pair.record.cancellations == 1 }
        #expect(pair.call("/echo") == nil)
    }

    @Test func aDrainingCalleeFinishesItsCallsAnswersNewOnes503AndCloses() async throws {
        let pair = Pair()
        pair.start()
        let first = try #require(pair.call("/parts?n=8"))
        #expect(try await first.head(by: Self.soon, on: Self.loop).status == 200)
        pair.callee.drain()
        let refused = try #require(pair.call("/echo"))
        let head = try await refused.head(by: Self.soon, on: Self.loop)
        #expect(head.status == 503 && String(buffer: refused.wholeBody() ?? ByteBuffer()).contains("shutting down"))
        var parts = 0
        for try await _ in first.parts { parts += 1 }
        #expect(parts == 8)
        await until { pair.callee.isClosed && pair.caller.isClosed }
    }

    @Test func aCalleeRefusesCallsBeyondTheLanesCapacity() async throws {
        let pair = Pair()
        pair.start()
        var silent: [CallTicket] = []
        for _ in 0..<CallLane.capacity { silent.append(try #require(pair.call("/silent"))) }
        await until { pair.callee.count == CallLane.capacity }
        #expect(!pair.caller.hasRoom)
        let over = try #require(pair.call("/echo"))
        #expect(try await over.head(by: Self.soon, on: Self.loop).status == 503)
        silent.removeAll()
        await until { pair.callee.count == 0 && pair.caller.hasRoom }
    }

    /// Waits until `condition` holds (the suite's time limit bounds the wait: it cancels the
    /// test, which ends the wait rather than spinning).
    private func until(_ condition: () -> Bool) async {
        while !condition(), !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
    }
}
