import DataEngine
import DequeModule
import ServiceRuntime
import Synchronization

/// What one real-time connection has yet to send. Frames are queued without waiting, so one
/// slow client never holds up delivery to others; at most `limit` may wait, and one more marks
/// the connection overflowed and ends the queue, so the connection closes with a reason
/// instead of buffering without bound. A task takes the frames to the transport only while
/// there are some (none waits on an idle connection); once the queue has ended and emptied,
/// it closes the transport. A frame delivering a data change or a channel message carries its
/// subscription and place: those never sent (refused, or left when the client went) are
/// remembered, so the connection's resume points start before them.
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
        var queue = Deque<Frame>()
        /// Frames queued and not yet taken by the transport.
        var pending = 0
        var ending = Ending.open
        var unsent: [String: Place] = [:]
        var waiter: CheckedContinuation<Void, Never>?
        /// A task is taking frames to the transport.
        var pumping = false
        /// The transport's close has begun (nothing more is taken).
        var closed = false
        /// The transport's close has returned.
        var closeDone = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []

        mutating func remember(_ change: ChangeTag?) {
            guard let change else { return }
            if let known = unsent[change.subscription], known <= change.place { return }
            unsent[change.subscription] = change.place
        }

        /// Marks a task as taking frames; false when one already is.
        mutating func startPumping() -> Bool {
            guard !pumping else { return false }
            pumping = true
            return true
        }
    }

    private enum Step {
        case send(Frame, abandoned: Bool)
        case close(Ending)
        case idle
    }

    private let state = Mutex(State())
    private let writer: any RTWriter
    let limit: Int

    init(limit: Int, writer: any RTWriter) {
        self.limit = limit
        self.writer = writer
    }

    /// Queues `text`; false when it was refused (the queue was full, which ends it, or had ended).
    @discardableResult
    func send(_ text: String, change: ChangeTag? = nil) -> Bool {
        let (accepted, pump) = state.withLock { state in
            guard state.ending == .open, state.pending < limit else {
                if state.ending == .open { state.ending = .overflow }
                state.remember(change)
                return (false, state.startPumping())
            }
            state.pending += 1
            state.queue.append(Frame(text: text, change: change))
            return (true, state.startPumping())
        }
        if pump { Task { await self.pump() } }
        return accepted
    }

    /// Queues an Engine.IO packet.
    func send(_ packet: EnginePacket) {
        send(packet.encoded)
    }

    /// Queues a Socket.IO packet.
    func send(_ packet: SocketIOPacket, change: ChangeTag? = nil) {
        send(EnginePacket.message(packet.encoded).encoded, change: change)
    }

    /// Takes the queue's frames to the transport until it is empty; closes the transport once
    /// the queue has ended.
    private func pump() async {
        while true {
            let step: Step = state.withLock { state in
                if let frame = state.queue.popFirst() { return .send(frame, abandoned: state.ending == .abandoned) }
                if state.ending != .open, !state.closed {
                    state.closed = true
                    return .close(state.ending)
                }
                state.pumping = false
                return .idle
            }
            switch step {
            case .send(let frame, let abandoned):
                taken(frame, sent: abandoned ? false : await writer.send(frame.text))
            case .close(let ending):
                await close(ending)
                state.withLock { state in
                    state.closeDone = true
                    defer { state.closeWaiters = [] }
                    return state.closeWaiters
                }.forEach { $0.resume() }
            case .idle:
                return
            }
        }
    }

    /// Closes the transport: with the reason when the queue overflowed, with 1001 when the
    /// process shuts down.
    private func close(_ ending: Ending) async {
        switch ending {
        case .overflow:
            RTMetrics.slowDisconnect()
            await writer.close(code: 1008, reason: "Too slow: more than \(limit) frames waiting")
        case .goingAway:
            await writer.close(code: SocketCloseCode.goingAway, reason: "Server restarting")
        case .protocolError:
            await writer.close(code: SocketCloseCode.protocolError, reason: "Not an Engine.IO packet")
        case .open, .normal, .abandoned:
            await writer.close(code: SocketCloseCode.normal, reason: "")
        }
    }

    /// Records that the transport took `frame`; `sent` says whether it reached it.
    private func taken(_ frame: Frame, sent: Bool) {
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
        await withCheckedContinuation { waiter in
            let ready = state.withLock { state in
                guard state.ending == .open, state.pending > limit / 2 else { return true }
                state.waiter = waiter
                return false
            }
            if ready { waiter.resume() }
        }
    }

    /// Ends the queue (an ending already set stays); the transport closes once what is queued
    /// has gone (or, for a client that went, been dropped).
    func finish(_ ending: Ending) {
        let (waiter, pump) = state.withLock { state in
            if state.ending == .open { state.ending = ending }
            defer { state.waiter = nil }
            return (state.waiter, state.startPumping())
        }
        waiter?.resume()
        if pump { Task { await self.pump() } }
    }

    /// Returns once the transport has been closed.
    func closed() async {
        await withCheckedContinuation { waiter in
            let done = state.withLock { state in
                if !state.closeDone { state.closeWaiters.append(waiter) }
                return state.closeDone
            }
            if done { waiter.resume() }
        }
    }

    /// Why the queue ended.
    var ending: Ending { state.withLock { $0.ending } }

    /// Per subscription, the first delivery queued but never sent.
    var unsent: [String: Place] { state.withLock { $0.unsent } }
}
