import HTTPTypes
import NIOCore
import Synchronization

/// A call lane's callee end (a service): each call the caller sends is served in a task of its
/// own, its answer sent within the credit the caller returns; a cancel or the lane's end
/// cancels the task. A draining lane answers new calls 503 and closes once its calls are done.
final class CalleeLane: LaneEnd {
    /// Serves a call the lane accepted.
    typealias Serve = @Sendable (ServedCall, CallHead, ByteBuffer) async -> Void

    let writer = LaneWriter<CallFrame>()
    private let table = Mutex(LaneTable<ServedCall>())
    private let heard = SocketLiveness()
    private let serve: Serve
    private let maximumPayload: Int

    /// A lane accepting calls of up to `maximumPayload` bytes (head and body), each served by `serve`.
    init(maximumPayload: Int, serve: @escaping Serve) {
        self.maximumPayload = maximumPayload
        self.serve = serve
    }

    /// How many calls are being served.
    var count: Int { table.withLock { $0.count } }

    func readFrames<Bytes: AsyncSequence>(from bytes: Bytes) async throws where Bytes.Element == ByteBuffer {
        try await dispatchFrames(from: bytes, maximumPayload: maximumPayload, heard: heard) { dispatch($0) }
    }

    private func dispatch(_ frame: CallFrame) {
        switch frame {
        case .call(let id, let head, let body): accept(id, head, body)
        case .credit(let id, let bytes): call(id)?.credited(Int(bytes))
        case .cancel(let id): call(id)?.cancel()
        case .finish: close()
        case .heartbeat, .answer, .part, .failed: break
        }
    }

    private enum Refusal: Error {
        case duplicate, draining, full
    }

    private func accept(_ id: UInt32, _ head: CallHead, _ body: ByteBuffer) {
        let accepted: Result<ServedCall, Refusal> = table.withLock { table in
            guard !table.isDraining else { return .failure(.draining) }
            guard table.count < CallLane.capacity else { return .failure(.full) }
            let call = ServedCall(id: id, lane: self)
            return table.accept(call, as: id) ? .success(call) : .failure(.duplicate)
        }
        switch accepted {
        case .success(let call): call.run { [serve] in await serve(call, head, body) }
        case .failure(.duplicate): break
        case .failure(.draining): writer.enqueue(Self.unavailable(id, "The service is shutting down"))
        case .failure(.full): writer.enqueue(Self.unavailable(id, "The service has too many calls in progress"))
        }
    }

    private static func unavailable(_ id: UInt32, _ message: String) -> CallFrame {
        var body = ByteBuffer()
        body.writeString(#"{"code":503,"message":"\#(message)"}"#)
        return .answer(
            id: id, AnswerHead(status: 503, headers: [.contentType: "application/json"]), part: body, fin: true)
    }

    private func call(_ id: UInt32) -> ServedCall? {
        table.withLock { $0[id] }
    }

    /// Takes a served call off the lane once its answer has ended.
    func finished(_ call: ServedCall) {
        if table.withLock({ $0.remove(call.id).lastLeft }) { close() }
    }

    func keepAlive() async throws {
        defer { close() }
        try await LaneKeepAlive.run(heard: heard, writer: writer, heartbeat: CallFrame.heartbeat) { isClosed }
    }

    var isClosed: Bool { table.withLock { $0.isClosed } }

    /// Answers new calls 503 and closes the lane once the calls on it are done.
    func drain() {
        if table.withLock({ $0.drain() }) { close() }
    }

    /// Ends the lane: the caller is told, and every call still served is cancelled.
    func close() {
        guard let calls = table.withLock({ $0.close() }) else { return }
        writer.enqueue(CallFrame.finish)
        writer.finish()
        for call in calls { call.cancel() }
    }
}

/// A served call's sending side, as a value: the credit its answer may use, the task serving
/// it, and the sender parked for credit. Events return what the handler (``ServedCall``) must
/// wake or cancel.
struct ServedCallState<Waiter: Sendable, Work: Sendable>: Sendable {
    /// What asking for room found.
    enum Reservation: Equatable {
        case taken, cancelled
        /// No room yet: park and ask again when woken.
        case wait
    }

    private var window = CreditWindow()
    private var waiter: Waiter?
    private(set) var isCancelled = false
    private var work: Work?

    /// The serving began: false when the call was cancelled before (cancel `work` now).
    mutating func started(_ work: Work) -> Bool {
        self.work = work
        return !isCancelled
    }

    /// The caller took `bytes` more of the answer: the sender to wake, if any.
    mutating func credited(_ bytes: Int) -> Waiter? {
        window.credit(bytes)
        defer { waiter = nil }
        return waiter
    }

    /// The caller gave the call up, or the lane ended: the work to cancel and the sender to wake.
    mutating func cancel() -> (work: Work?, waiter: Waiter?) {
        isCancelled = true
        defer { waiter = nil }
        return (work, waiter)
    }

    /// Takes `bytes` from the window, if it has room and the call goes on.
    mutating func reserve(_ bytes: Int) -> Reservation {
        if isCancelled { return .cancelled }
        return window.take(bytes) ? .taken : .wait
    }

    /// Parks the sender until credit comes: false when it should ask again at once (room came,
    /// or the call was cancelled, since it asked).
    mutating func park(_ waiter: Waiter, for bytes: Int) -> Bool {
        guard !isCancelled, !window.admits(bytes) else { return false }
        self.waiter = waiter
        return true
    }
}

/// One call a callee serves: the handler of its ``ServedCallState``.
final class ServedCall: Sendable {
    let id: UInt32
    let lane: CalleeLane
    private let state = Mutex(ServedCallState<CheckedContinuation<Void, Never>, Task<Void, Never>>())

    init(id: UInt32, lane: CalleeLane) {
        self.id = id
        self.lane = lane
    }

    /// Serves the call with `work` in a task of its own, then takes it off the lane.
    func run(_ work: @escaping @Sendable () async -> Void) {
        let task = Task {
            await work()
            lane.finished(self)
        }
        if !state.withLock({ $0.started(task) }) { task.cancel() }
    }

    /// The caller took `bytes` more of the answer.
    func credited(_ bytes: Int) {
        state.withLock { $0.credited(bytes) }?.resume()
    }

    /// The caller gave the call up, or the lane ended: the task is cancelled.
    func cancel() {
        let (task, waiter) = state.withLock { $0.cancel() }
        task?.cancel()
        waiter?.resume()
    }

    /// Waits until `bytes` of the answer may be sent and takes them from the credit; false
    /// when the call was cancelled.
    func reserve(_ bytes: Int) async -> Bool {
        while true {
            switch state.withLock({ $0.reserve(bytes) }) {
            case .taken: return true
            case .cancelled: return false
            case .wait:
                // Credit may never come: the serving task's cancellation gives the call up.
                await withTaskCancellationHandler {
                    await withCheckedContinuation { waiter in
                        if !state.withLock({ $0.park(waiter, for: bytes) }) { waiter.resume() }
                    }
                } onCancel: {
                    cancel()
                }
            }
        }
    }
}
