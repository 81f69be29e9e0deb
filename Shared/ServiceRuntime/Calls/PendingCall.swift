import NIOCore
import Synchronization

/// One call on a caller's lane, from its sending to the end of its answer: the handler of its
/// ``AnswerInbox``, which the lane's reader fills and one task takes from. Each part taken
/// gives its bytes back as credit once the next is asked for (the taker has written it on), so
/// the callee sends at most a ``CreditWindow`` ahead of the taker.
final class PendingCall: Sendable {
    /// How a call ended without a whole answer.
    typealias Failure = CallFailure

    let id: UInt32
    private let lane: CallLane
    private let inbox = Mutex(AnswerInbox<CheckedContinuation<Void, Never>>())

    init(id: UInt32, lane: CallLane) {
        self.id = id
        self.lane = lane
    }

    /// The answer's head arrived with its first part.
    func answered(_ head: AnswerHead, part: ByteBuffer, fin: Bool) {
        inbox.withLock { $0.answered(head, part: part, fin: fin) }?.resume()
    }

    /// Another part of the answer arrived.
    func received(_ part: ByteBuffer, fin: Bool) {
        inbox.withLock { $0.received(part, fin: fin) }?.resume()
    }

    /// The call ended without (the rest of) its answer (``AnswerInbox/fail(_:)``).
    func fail(_ failure: Failure) {
        inbox.withLock { $0.fail(failure) }?.resume()
    }

    /// Whether the answer's last part has arrived (the callee has nothing left to do).
    var isWhole: Bool { inbox.withLock { $0.isWhole } }

    /// The whole body when the answer has ended and none of it has been taken; nil otherwise.
    func wholeBody() -> ByteBuffer? {
        inbox.withLock { $0.takeWholeBody() }
    }

    /// The answer's head; throws ``Failure`` when the call ended before it.
    func head() async throws -> AnswerHead {
        try await wait { inbox in try inbox.takeHead()?.get() }
    }

    /// The next part of the answer, nil after the last; throws ``Failure`` when the answer
    /// ended short. Gives back the credit of the part taken before.
    func next() async throws -> ByteBuffer? {
        let (part, credit): (ByteBuffer?, Int) = try await wait { inbox in
            switch inbox.takePart() {
            case .part(let part, let credit): return (part, credit)
            case .end(let credit): return (nil, credit)
            case .failed(let failure): throw failure
            case .wait: return nil
            }
        }
        if credit > 0 { lane.writer.enqueue(CallFrame.credit(id: id, bytes: UInt32(credit))) }
        return part
    }

    /// Asks the inbox with `attempt` until it answers (or throws), parking between attempts.
    /// Cancelling the task gives the call up.
    private func wait<Value>(
        _ attempt: (inout AnswerInbox<CheckedContinuation<Void, Never>>) throws -> Value?
    ) async throws -> Value {
        while true {
            if let value = try inbox.withLock({ try attempt(&$0) }) { return value }
            try await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let parked = !Task.isCancelled && inbox.withLock { $0.park(waiter) }
                    if !parked { waiter.resume() }
                }
                try Task.checkCancellation()
            } onCancel: {
                fail(.lost)
            }
        }
    }
}
