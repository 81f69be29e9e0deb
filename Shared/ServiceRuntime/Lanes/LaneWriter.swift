import NIOCore
import Synchronization

/// The bytes one end of a socket lane sends: frames from every socket of the lane are encoded
/// into one pending buffer, which the lane's stream takes whole (many frames per write). A
/// sender of data waits while more than ``highWater`` bytes are pending; control frames never
/// wait (they are small and bounded by the data they answer).
final class LaneWriter<Frame: LaneFrameCoding>: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Pending bytes above which senders of data wait.
    static var highWater: Int { 1 << 20 }

    fileprivate struct State {
        var pending = ByteBuffer()
        var finished = false
        var reader: CheckedContinuation<ByteBuffer?, Never>?
        var senders: [CheckedContinuation<Void, Never>] = []
        var lastSent = NIODeadline.now()
    }

    private let state = Mutex(State())

    /// Queues `frame` without waiting; dropped once the writer has finished.
    func enqueue(_ frame: Frame) {
        let reader: (CheckedContinuation<ByteBuffer?, Never>, ByteBuffer)? = state.withLock { state in
            guard !state.finished else { return nil as (CheckedContinuation<ByteBuffer?, Never>, ByteBuffer)? }
            frame.encode(into: &state.pending)
            guard let reader = state.reader else { return nil }
            state.reader = nil
            return (reader, state.take())
        }
        reader.map { $0.0.resume(returning: $0.1) }
    }

    /// Queues a data frame once no more than ``highWater`` bytes wait; false once finished.
    func send(_ frame: Frame) async -> Bool {
        await withCheckedContinuation { sender in
            let wait = state.withLock { state in
                guard !state.finished, state.pending.readableBytes > Self.highWater else { return false }
                state.senders.append(sender)
                return true
            }
            if !wait { sender.resume() }
        }
        guard !isFinished else { return false }
        enqueue(frame)
        return true
    }

    /// Ends the bytes once what is pending has been taken; waiting senders are released.
    func finish() {
        let (reader, senders) = state.withLock { state in
            state.finished = true
            defer { state.senders = [] }
            let reader = state.pending.readableBytes == 0 ? state.reader : nil
            if reader != nil { state.reader = nil }
            return (reader, state.senders)
        }
        reader?.resume(returning: nil)
        senders.forEach { $0.resume() }
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// How long nothing has been taken to send.
    var sinceSent: Duration {
        .nanoseconds((NIODeadline.now() - state.withLock { $0.lastSent }).nanoseconds)
    }

    private func next() async -> ByteBuffer? {
        let bytes: ByteBuffer? = await withCheckedContinuation { reader in
            let ready: ByteBuffer?? = state.withLock { state in
                if state.pending.readableBytes > 0 { return .some(state.take()) }
                if state.finished { return .some(nil) }
                state.reader = reader
                return nil
            }
            if let ready { reader.resume(returning: ready) }
        }
        let senders = state.withLock { state in
            guard state.pending.readableBytes <= Self.highWater else { return [CheckedContinuation<Void, Never>]() }
            defer { state.senders = [] }
            return state.senders
        }
        senders.forEach { $0.resume() }
        return bytes
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let writer: LaneWriter
        mutating func next() async -> ByteBuffer? { await writer.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(writer: self) }
}

extension LaneWriter.State {
    fileprivate mutating func take() -> ByteBuffer {
        lastSent = .now()
        defer { pending = ByteBuffer() }
        return pending
    }
}
