import NIOCore
import Synchronization
import TestSupport
import Testing

@testable import ServiceRuntime

/// Socket lanes in memory: two ends whose writers feed each other's readers.
@Suite(.timeLimit(.minutes(2)), .tags(.fast)) struct SocketLaneTests {
    static let frames: [LaneFrame] = [
        .open(
            socket: 7,
            SocketOpening(
                resource: "rt/socket?EIO=4&x=é", headers: [.init(name: "x-baas-identity", value: "{\"a\":1}")])),
        .accepted(socket: 7),
        .refused(socket: 8, status: 404, body: ByteBuffer(string: #"{"code":404}"#)),
        .frame(socket: 7, .text("hello")),
        .frame(
            socket: 7, SocketFrame(kind: .continuation, fin: false, payload: ByteBuffer(repeating: 1, count: 3_000))),
        .frame(socket: 7, .close(code: 4002, reason: "asked")),
        .credit(socket: 7, bytes: 131_072),
        .finish(socket: 7),
        .finish(socket: SocketLane.laneItself),
        .heartbeat,
    ]

    @Test(arguments: [1, 2, 7, 64, 100_000])
    func everyFrameSurvivesTheWireInPiecesOfAnySize(piece: Int) throws {
        var wire = ByteBuffer()
        for frame in Self.frames { frame.encode(into: &wire) }
        var decoder = LaneFrameDecoder<LaneFrame>(maximumPayload: 1 << 16)
        var decoded: [LaneFrame] = []
        while wire.readableBytes > 0 {
            decoder.append(wire.readSlice(length: min(piece, wire.readableBytes))!)
            while let frame = try decoder.next() { decoded.append(frame) }
        }
        #expect(decoded == Self.frames)
    }

    @Test func framesOverTheLimitAndUnknownKindsAreRefused() {
        var large = ByteBuffer()
        LaneFrame.frame(socket: 1, .binary(ByteBuffer(repeating: 0, count: 2_000))).encode(into: &large)
        var decoder = LaneFrameDecoder<LaneFrame>(maximumPayload: 1_000)
        decoder.append(large)
        #expect(throws: SocketStreamError.frameTooLarge) { try decoder.next() }

        var unknown = ByteBuffer()
        unknown.writeInteger(UInt8(99))
        unknown.writeInteger(UInt32(1))
        unknown.writeInteger(UInt32(0))
        var other = LaneFrameDecoder<LaneFrame>(maximumPayload: 1_000)
        other.append(unknown)
        #expect(throws: SocketStreamError.malformed) { try other.next() }
    }

    /// A gateway end and a service end that accepts every socket unless its path is `refuse`.
    struct Pair {
        let gateway = SocketLane(maximumPayload: 1 << 20)
        let service = SocketLane(maximumPayload: 1 << 20)
        let accepted = AcceptedSockets()

        func start() {
            Task { [gateway, service, accepted] in
                try await service.read(gateway.writer) { id, opening in
                    guard let socket = service.accept(id) else { return }
                    guard opening.resource != "refuse" else {
                        service.writer.enqueue(.refused(socket: id, status: 404, body: ByteBuffer(string: "no")))
                        return service.remove(id)
                    }
                    service.writer.enqueue(.accepted(socket: id))
                    accepted.add(socket)
                }
            }
            Task { [gateway, service] in try await gateway.read(service.writer) }
        }

        func open(_ resource: String = "echo") async throws -> (LaneSocket, LaneSocket.Answer) {
            let socket = try #require(gateway.open(SocketOpening(resource: resource, headers: [])))
            return (socket, await socket.answer())
        }
    }

    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    final class AcceptedSockets: Sendable {
        private let sockets = Mutex<[UInt32: LaneSocket]>([:])
        func add(_ socket: LaneSocket) { sockets.withLock { $0[socket.id] = socket } }
        func socket(_ id: UInt32) -> LaneSocket? { sockets.withLock { $0[id] } }
    }

    @Test func aSocketIsAcceptedOrRefusedAndLeavesOnceBothEndsFinish() async throws {
        let pair = Pair()
        pair.start()
        let (refused, answer) = try await pair.open("refuse")
        guard case .refused(404, let body) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(String(buffer: body) == "no" && pair.gateway.count == 0 && refused.id != 0)

        let (socket, accepted) = try await pair.open()
        guard case .accepted = accepted else {
            Issue.record("\(accepted)")
            return
        }
        let served = try #require(pair.accepted.socket(socket.id))
        #expect(await socket.send(.text("ping")))
        #expect(await served.next() == .text("ping"))
        #expect(await served.send(.close(code: 1000)))
        #expect(await socket.next() == .close(code: 1000))
        socket.finish()
        #expect(await served.next() == nil, "the gateway's finish ends what the service reads")
        served.finish()
        #expect(await socket.next() == nil)
        await until { pair.gateway.count == 0 && pair.service.count == 0 }
    }

    /// At most the window is in flight on one socket: a sender waits for the reader, while
    /// another socket on the lane carries on; reading returns credit and every frame arrives
    /// in order.
    @Test func creditBoundsEachSocketAndAStalledOneHoldsUpNoOther() async throws {
        let pair = Pair()
        pair.start()
        let (stalled, _) = try await pair.open()
        let (other, _) = try await pair.open()
        let frame = SocketFrame.binary(ByteBuffer(repeating: 7, count: 1 << 16))
        let fitting = LaneSocket.window / LaneSocket.cost(frame)
        let sent = Counter()
        let count = fitting * 10
        let sending = Task {
            for index in 0..<count {
                var payload = frame.payload
                payload.setInteger(UInt32(index), at: 0)
                guard await stalled.send(.binary(payload)) else { return }
                sent.add()
            }
        }
        await until { sent.value == fitting }
        // Another socket's round trip after the window filled: nothing more of the stalled
        // one's went meanwhile.
        let served = try #require(pair.accepted.socket(other.id))
        #expect(await other.send(.text("through")))
        #expect(await served.next() == .text("through"))
        #expect(sent.value == fitting)

        let reader = try #require(pair.accepted.socket(stalled.id))
        for index in 0..<count {
            let received = await reader.next()
            #expect(received?.payload.getInteger(at: 0, as: UInt32.self) == UInt32(index))
        }
        await sending.value
        #expect(sent.value == count)
    }

    @Test func aLaneThatEndsLosesEverySocketOnIt() async throws {
        let pair = Pair()
        pair.start()
        let (socket, _) = try await pair.open()
        let served = try #require(pair.accepted.socket(socket.id))
        let waiting = Task { await served.next() }
        pair.gateway.close()
        #expect(await socket.next() == nil)
        #expect(await socket.send(.text("late")) == false)
        #expect(await waiting.value == nil, "the service end hears the lane's end")
        #expect(pair.gateway.open(SocketOpening(resource: "echo", headers: [])) == nil)
        await until { pair.service.isClosed }
    }

    /// Waits until `condition` holds (the suite's time limit bounds the wait: it cancels the
    /// test, which ends the wait rather than spinning).
    private func until(_ condition: () -> Bool) async {
        while !condition(), !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
    }
}
