import Foundation
import InternalProtocol
import Logging
import NIOCore

/// What travels with one request through every hop: its id, trace context, deadline and the
/// identity it acts for.
package struct CallContext: Sendable {
    /// The request id shown in logs and the `x-request-id` response header.
    package var requestID: String
    /// W3C trace context, passed on unchanged when present.
    package var traceparent: String?
    /// When the caller stops waiting.
    package var deadline: NIODeadline
    /// Who the request acts for, if anyone.
    package var identity: Identity?
    /// The public client's IP address, when the request came through the gateway.
    package var clientAddress: String?
    /// The public path prefix of a passed-through request (``InternalHeader/publicPrefix``).
    package var publicPrefix: String?
    /// The newest catalog version of the identity's app known committed, which the callee's
    /// catalog must have reached (``CatalogFreshness``).
    package var catalogVersion: Int64?
    /// A logger carrying the request id.
    package var logger: Logger

    /// Creates a context.
    package init(
        requestID: String = CallContext.newRequestID(), traceparent: String? = nil, deadline: NIODeadline,
        identity: Identity? = nil, logger: Logger
    ) {
        self.requestID = requestID
        self.traceparent = traceparent
        self.deadline = deadline
        self.identity = identity
        self.logger = logger
        self.logger[metadataKey: "request_id"] = .string(requestID)
    }

    /// A fresh request id (32 lower-case hex digits).
    package static func newRequestID() -> String {
        // 128 random bits as 32 lower-case hex digits, built byte-wise (Foundation's string
        // replacement cost the gateway a thirtieth of its CPU per request).
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: 0, count: 32)
        for half in 0..<2 {
            var bits = generator.next() as UInt64
            for index in 0..<16 {
                bytes[half * 16 + index] = digits[Int(bits & 0xF)]
                bits >>= 4
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same context with a deadline no later than `now + timeout`.
    package func limited(to timeout: TimeAmount) -> CallContext {
        var copy = self
        copy.deadline = min(deadline, .now() + timeout)
        return copy
    }

    /// Milliseconds left before the deadline (never negative).
    package var remainingMilliseconds: Int64 {
        max(0, (deadline - .now()).nanoseconds / 1_000_000)
    }
}
