import NIOCore
import Synchronization

/// A call lane's caller end: one internal stream to a service on which many calls travel at
/// once as ``CallFrame``s, each a number in the lane's table until its ticket is dropped. A call
/// costs its state here and a task at the callee, not an HTTP/2 stream, its channel and
/// pipeline, and a request state machine at both ends. When the lane ends, every call on it
/// without its whole answer is lost.
final class CallLane: LaneEnd {
    let writer = LaneWriter<CallFrame>()
    private let table = Mutex(LaneTable<PendingCall>())
    private let heard = SocketLiveness()

    /// The most calls on a lane at once (the callee refuses more).
    static let capacity = 256
    /// The largest frame a caller accepts (an answer's part with its head).
    static let maximumPayload = CallFrame.largestPart + (64 << 10)

    /// Whether the lane has ended.
    var isClosed: Bool { table.withLock { $0.isClosed } }

    /// Whether the lane can take another call.
    var hasRoom: Bool { table.withLock { !$0.isClosed && $0.count < Self.capacity } }

    /// Sends a call with its whole `body`; nil once the lane has ended (the call was not sent).
    func start(_ head: CallHead, body: ByteBuffer) -> CallTicket? {
        guard let call = table.withLock({ $0.open { PendingCall(id: $0, lane: self) } }) else { return nil }
        writer.enqueue(CallFrame.call(id: call.id, head, body: body))
        return CallTicket(call, lane: self)
    }

    func readFrames<Bytes: AsyncSequence>(from bytes: Bytes) async throws where Bytes.Element == ByteBuffer {
        try await dispatchFrames(from: bytes, maximumPayload: Self.maximumPayload, heard: heard) { dispatch($0) }
    }

    private func dispatch(_ frame: CallFrame) {
        switch frame {
        case .answer(let id, let head, let part, let fin): call(id)?.answered(head, part: part, fin: fin)
        case .part(let id, let part, let fin): call(id)?.received(part, fin: fin)
        case .failed(let id): call(id)?.fail(.failed)
        case .finish: close()
        case .heartbeat, .call, .credit, .cancel: break
        }
    }

    private func call(_ id: UInt32) -> PendingCall? {
        table.withLock { $0[id] }
    }

    func keepAlive() async throws {
        defer { close() }
        try await LaneKeepAlive.run(heard: heard, writer: writer, heartbeat: CallFrame.heartbeat) { isClosed }
    }

    /// Takes `call` off the lane; the callee is told to stop unless the whole answer arrived
    /// (a callee that already ended the call ignores the cancel).
    func release(_ call: PendingCall) {
        let removed = table.withLock { $0.remove(call.id).removed }
        if removed, !call.isWhole { writer.enqueue(CallFrame.cancel(id: call.id)) }
    }

    /// A caller's lane closes only when it ends.
    func drain() { close() }

    /// Ends the lane: the callee is told, and every call still on it is lost.
    func close() {
        guard let calls = table.withLock({ $0.close() }) else { return }
        writer.enqueue(CallFrame.finish)
        writer.finish()
        for call in calls { call.fail(.lost) }
    }
}

/// A caller's hold on one call: its answer, and, once dropped, the call's place on the lane
/// (a call given up before its answer ended is cancelled at the callee). Dropping it is the
/// only release, so a response the server never wrote cannot leave a call behind.
final class CallTicket: Sendable {
    private let call: PendingCall
    private let lane: CallLane

    init(_ call: PendingCall, lane: CallLane) {
        self.call = call
        self.lane = lane
    }

    deinit { lane.release(call) }

    /// The answer's head, failing with ``CallFailure/deadline`` when it has not come by
    /// `deadline` (timed on `eventLoop`).
    func head(by deadline: NIODeadline, on eventLoop: any EventLoop) async throws -> AnswerHead {
        let call = call
        let timer = eventLoop.scheduleTask(deadline: deadline) { call.fail(.deadline) }
        defer { timer.cancel() }
        return try await call.head()
    }

    /// The whole answer's body, when all of it has arrived.
    func wholeBody() -> ByteBuffer? { call.wholeBody() }

    /// The answer's body as it arrives, its credit returned as it is taken.
    var parts: CallAnswerParts { CallAnswerParts(ticket: self) }

    fileprivate func next() async throws -> ByteBuffer? { try await call.next() }
}

/// An answer's body, part by part; for one reader.
struct CallAnswerParts: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let ticket: CallTicket

    struct AsyncIterator: AsyncIteratorProtocol {
        let ticket: CallTicket
        mutating func next() async throws -> ByteBuffer? { try await ticket.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(ticket: ticket) }
}
