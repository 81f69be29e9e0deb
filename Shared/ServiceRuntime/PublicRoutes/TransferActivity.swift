import Hummingbird
import InternalProtocol
import NIOCore
import Synchronization

/// When a streamed transfer last made progress, so that a silent one can be cut after its idle
/// timeout instead of a deadline on the whole transfer (which a large upload would outlive).
final class TransferActivity: Sendable {
    private let idle: Duration?
    private let lastProgress = Atomic<Int64>(0)

    /// Tracks a transfer cut after `idle` of silence; nil never cuts it.
    init(idle: Duration?) {
        self.idle = idle
        touch()
    }

    /// Records progress now.
    func touch() {
        guard idle != nil else { return }
        lastProgress.store(NIODeadline.now().uptimeNanoseconds.asInt64, ordering: .relaxed)
    }

    /// Runs `work`, cancelling it with 504 once no progress has been recorded for the idle timeout.
    func watch<Result: Sendable>(service: ServiceName, _ work: @escaping @Sendable () async throws -> Result)
        async throws -> Result
    {
        guard let idle else { return try await work() }
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                while true {
                    try await Task.sleep(for: idle / 4)
                    let silent =
                        NIODeadline.now().uptimeNanoseconds.asInt64 - self.lastProgress.load(ordering: .relaxed)
                    if silent > idle.nanoseconds { throw ErrorEnvelope.idleTimeout(service) }
                }
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let result = next { return result }
            }
            throw CancellationError()
        }
    }
}

/// A request body read while counting: crossing `limit` ends it with 413, ending short of its
/// declared length ends it with 400 (an HTTP/2 connection that drops mid-body otherwise looks
/// like a complete body), and every chunk counts as progress of the transfer.
package struct LimitedBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    package typealias Element = ByteBuffer
    let base: Base
    let limit: Int
    let declaredLength: Int?
    let activity: TransferActivity?

    /// `base`, ended with 413 past `limit` and with 400 when it stops short of `declaredLength`.
    package init(base: Base, limit: Int, declaredLength: Int?) {
        self.init(base: base, limit: limit, declaredLength: declaredLength, activity: nil)
    }

    init(base: Base, limit: Int, declaredLength: Int?, activity: TransferActivity?) {
        self.base = base
        self.limit = limit
        self.declaredLength = declaredLength
        self.activity = activity
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let limit: Int
        let declaredLength: Int?
        let activity: TransferActivity?
        var count = 0

        package mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else {
                if let declaredLength, count != declaredLength {
                    throw ErrorEnvelope.badRequest("The body ended after \(count) of its \(declaredLength) bytes")
                }
                return nil
            }
            count += chunk.readableBytes
            if count > limit { throw ErrorEnvelope.payloadTooLarge(limit: limit) }
            activity?.touch()
            return chunk
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), limit: limit, declaredLength: declaredLength, activity: activity)
    }
}

extension Request {
    /// The body as it arrives, ended with 413 past `limit` and with 400 when it stops short of
    /// its declared `content-length`.
    package func limitedBody(limit: Int) -> LimitedBody<RequestBody> {
        limitedBody(limit: limit, activity: nil)
    }

    func limitedBody(limit: Int, activity: TransferActivity?) -> LimitedBody<RequestBody> {
        LimitedBody(
            base: body, limit: limit, declaredLength: headers[.contentLength].flatMap(Int.init), activity: activity)
    }
}

extension UInt64 {
    fileprivate var asInt64: Int64 { Int64(truncatingIfNeeded: self) }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
