import NIOCore
import Synchronization

/// One call on a caller's lane, from its sending to the end of its answer: the answer's head
/// and parts as the lane's reader hands them over, taken by one task. Each part taken returns
/// its bytes as credit once the next is asked for (the taker has written it on), so the callee
/// sends at most ``window`` bytes ahead of the taker.
final class PendingCall: Sendable {
    /// How a call ended without a whole answer.
    enum Failure: Error, Equatable {
        /// The lane ended before the answer did (the callee may or may not have acted).
        case lost
        /// The callee failed the answer after its head.
        case failed
        /// The call's deadline passed before its head arrived.
        case deadline
        /// The callee sent more than its credit allows.
        case overrun
    }

    /// The most answer bytes the callee sends ahead of the taker.
    static let window = 256 << 10

    fileprivate struct State {
        var head: AnswerHead?
        var parts: [ByteBuffer] = []
        var buffered = 0
        var finished = false
        var failure: Failure?
        var waiter: CheckedContinuation<Void, Never>?
        /// Bytes taken whose credit has not gone back.
        var taken = 0

        var isReady: Bool { failure != nil || !parts.isEmpty || finished || (head != nil && waitingForHead) }
        var waitingForHead = false
    }

    let id: UInt32
    private let lane: CallLane
    private let state = Mutex(State())

    init(id: UInt32, lane: CallLane) {
        self.id = id
        self.lane = lane
    }

    /// The answer's head arrived with its first part.
    func answered(_ head: AnswerHead, part: ByteBuffer, fin: Bool) {
        update { state in
            guard state.head == nil else {
                state.failure = state.failure ?? .overrun
                return
            }
            state.head = head
            state.append(part, fin: fin)
        }
    }

    /// Another part of the answer arrived.
    func received(_ part: ByteBuffer, fin: Bool) {
        update { state in
            guard state.head != nil else {
                state.failure = state.failure ?? .overrun
                return
            }
            state.append(part, fin: fin)
        }
    }

    /// The call ended without (the rest of) its answer; later failures do not replace the
    /// first, an answer already whole is kept, and a deadline only stops a call still waiting
    /// for its head.
    func fail(_ failure: Failure) {
        update { state in
            guard !state.finished, failure != .deadline || state.head == nil else { return }
            state.failure = state.failure ?? failure
        }
    }

    /// Whether the answer's last part has arrived (the callee has nothing left to do).
    var isWhole: Bool { state.withLock { $0.finished } }

    private func update(_ change: (inout State) -> Void) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            change(&state)
            if state.buffered > Self.window + CallFrame.largestPart { state.failure = state.failure ?? .overrun }
            guard state.isReady, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// The whole body when the answer has ended and none of it has been taken; nil otherwise.
    func wholeBody() -> ByteBuffer? {
        state.withLock { state in
            guard state.finished, state.failure == nil, state.taken == 0 else { return nil }
            defer { (state.parts, state.buffered) = ([], 0) }
            guard state.parts.count > 1 else { return state.parts.first ?? ByteBuffer() }
            var body = ByteBuffer()
            body.reserveCapacity(state.buffered)
            for part in state.parts { body.writeImmutableBuffer(part) }
            return body
        }
    }

    /// The answer's head; throws ``Failure`` when the call ended before it.
    func head() async throws -> AnswerHead {
        try await wait { state in
            if let head = state.head { return head }
            if let failure = state.failure { throw failure }
            state.waitingForHead = true
            return nil
        }
    }

    /// The next part of the answer, nil after the last; throws ``Failure`` when the answer
    /// ended short. Returns the credit of the part taken before.
    func next() async throws -> ByteBuffer? {
        let part: ByteBuffer? =
            try await wait { state in
                state.waitingForHead = false
                if let failure = state.failure { throw failure }
                if !state.parts.isEmpty {
                    let part = state.parts.removeFirst()
                    state.buffered -= part.readableBytes
                    return .some(part)
                }
                if state.finished { return .some(nil) }
                return nil
            } ?? nil
        returnCredit(adding: part?.readableBytes ?? 0)
        return part
    }

    private func returnCredit(adding bytes: Int) {
        let credit = state.withLock { state in
            defer { state.taken = bytes }
            return state.taken
        }
        if credit > 0 { lane.writer.enqueue(CallFrame.credit(id: id, bytes: UInt32(credit))) }
    }

    /// Reads the state with `attempt` until it returns a value (or throws), waiting for the
    /// lane's reader between attempts. Cancelling the task gives the call up.
    private func wait<Value>(_ attempt: (inout State) throws -> Value?) async throws -> Value {
        while true {
            if let value = try state.withLock({ try attempt(&$0) }) { return value }
            try await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state in
                        if state.isReady || Task.isCancelled { return true }
                        state.waiter = waiter
                        return false
                    }
                    if ready { waiter.resume() }
                }
                try Task.checkCancellation()
            } onCancel: {
                fail(.lost)
            }
        }
    }
}

extension PendingCall.State {
    fileprivate mutating func append(_ part: ByteBuffer, fin: Bool) {
        if part.readableBytes > 0 {
            parts.append(part)
            buffered += part.readableBytes
        }
        finished = fin
    }
}
