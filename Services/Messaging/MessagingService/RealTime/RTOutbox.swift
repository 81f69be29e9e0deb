import DataEngine
import Synchronization

/// What one real-time connection has yet to send. Frames are queued without waiting, so one
/// slow client never holds up delivery to others; at most `limit` may wait, and one more marks
/// the connection overflowed and ends the queue, so the connection closes with a reason
/// instead of buffering without bound. A frame delivering a data change or a channel message
/// carries its subscription and place: those never sent (refused, or left when the client went)
/// are remembered, so the connection's resume points start before them.
final class RTOutbox: Sendable {
    /// One queued frame.
    struct Frame: Sendable {
        let text: String
        let change: ChangeTag?
    }

    /// What a frame delivers: to which subscription, and its place in that subscription's order.
    struct ChangeTag: Sendable {
        let subscription: String
        let place: Place
    }

    /// A delivery's place: a data change's position in commit order, or a channel message's number.
    enum Place: Sendable, Comparable {
        case change(ChangePosition)
        case message(Int64)
    }

    /// Why the queue ended.
    enum Ending: Sendable, Equatable {
        /// Still open.
        case open
        /// The connection is done; what is queued is still sent.
        case normal
        /// The process is shutting down; what is queued is still sent, then 1001.
        case goingAway
        /// More than `limit` frames waited: 1008.
        case overflow
        /// The client sent what is not Engine.IO / Socket.IO: 1002.
        case protocolError
        /// The client went: what is queued is not sent.
        case abandoned
    }

    private struct State {
        var pending = 0
        var ending = Ending.open
        var unsent: [String: Place] = [:]
        var waiter: CheckedContinuation<Void, Never>?

        mutating func remember(_ change: ChangeTag?) {
            guard let change else { return }
            if let known = unsent[change.subscription], known <= change.place { return }
            unsent[change.subscription] = change.place
        }
    }

    /// The frames in order, ended by ``finish(_:)`` or an overflow.
    let frames: AsyncStream<Frame>
    private let continuation: AsyncStream<Frame>.Continuation
    private let state = Mutex(State())
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        (frames, continuation) = AsyncStream.makeStream(of: Frame.self)
    }

    /// Queues `text`; false when it was refused (the queue was full, which ends it, or had ended).
    @discardableResult
    func send(_ text: String, change: ChangeTag? = nil) -> Bool {
        state.withLock { state in
            guard state.ending == .open, state.pending < limit else {
                if state.ending == .open {
                    state.ending = .overflow
                    continuation.finish()
                }
                state.remember(change)
                return false
            }
            state.pending += 1
            continuation.yield(Frame(text: text, change: change))
            return true
        }
    }

    /// Queues an Engine.IO packet.
    func send(_ packet: EnginePacket) {
        send(packet.encoded)
    }

    /// Queues a Socket.IO packet.
    func send(_ packet: SocketIOPacket, change: ChangeTag? = nil) {
        send(EnginePacket.message(packet.encoded).encoded, change: change)
    }

    /// Records that the writer took `frame`; `sent` says whether it reached the stream.
    func taken(_ frame: Frame, sent: Bool) {
        let waiter = state.withLock { state in
            state.pending -= 1
            if !sent { state.remember(frame.change) }
            guard state.pending <= limit / 2 else { return nil as CheckedContinuation<Void, Never>? }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once at most half the limit waits (or the queue ended): the connection reads the
    /// client's next request only then, so a client flooding requests is slowed, not dropped.
    func roomForReplies() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                let ready = state.withLock { state in
                    guard state.ending == .open, state.pending > limit / 2, !Task.isCancelled else { return true }
                    state.waiter = waiter
                    return false
                }
                if ready { waiter.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    /// Ends the queue (an ending already set stays).
    func finish(_ ending: Ending) {
        let waiter = state.withLock { state in
            if state.ending == .open { state.ending = ending }
            defer { state.waiter = nil }
            return state.waiter
        }
        continuation.finish()
        waiter?.resume()
    }

    /// Why the queue ended.
    var ending: Ending { state.withLock { $0.ending } }

    /// Per subscription, the first delivery queued but never sent.
    var unsent: [String: Place] { state.withLock { $0.unsent } }
}
