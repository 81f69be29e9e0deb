import Synchronization

/// What one real-time connection has yet to send. Frames are queued without waiting, so one
/// slow client never holds up delivery to others; at most `limit` may wait, and one more marks
/// the connection overflowed and ends the queue, so the connection closes with a reason
/// instead of buffering without bound.
final class RTOutbox: Sendable {
    /// The frames in order, ended by ``finish()`` or an overflow.
    let frames: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let pending = Atomic<Int>(0)
    private let overflow = Atomic<Bool>(false)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        (frames, continuation) = AsyncStream.makeStream(of: String.self)
    }

    /// Queues `frame`; false when the queue was full (the connection is then overflowed).
    @discardableResult
    func send(_ frame: String) -> Bool {
        guard pending.add(1, ordering: .relaxed).newValue <= limit else {
            overflow.store(true, ordering: .relaxed)
            continuation.finish()
            return false
        }
        continuation.yield(frame)
        return true
    }

    /// Queues an Engine.IO packet.
    func send(_ packet: EnginePacket) {
        send(packet.encoded)
    }

    /// Queues a Socket.IO packet.
    func send(_ packet: SocketIOPacket) {
        send(EnginePacket.message(packet.encoded))
    }

    /// Records that the writer took one frame.
    func taken() {
        pending.subtract(1, ordering: .relaxed)
    }

    /// Whether frames were refused for want of room.
    var overflowed: Bool { overflow.load(ordering: .relaxed) }

    /// Ends the queue once what it holds is sent.
    func finish() {
        continuation.finish()
    }
}
