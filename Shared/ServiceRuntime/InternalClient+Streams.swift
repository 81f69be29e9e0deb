import AsyncHTTPClient
import Foundation
import InternalProtocol
import NIOCore
import NIOHTTP1

extension InternalClient {
    /// Calls raw operation `name` on `service` with `request` as JSON and hands the answer's body
    /// to `consume` as it arrives: the transport's flow control holds the peer back while
    /// `consume` is busy, so nothing is buffered whole. A non-2xx answer is rethrown as its
    /// envelope; a lost connection is 503 and never retried (part of the body may be consumed).
    /// Errors `consume` throws, and failures while it reads the body, reach the caller unchanged.
    package func streamingCall<Request: Encodable & Sendable, Result: Sendable>(
        _ name: String, _ request: Request, on service: ServiceName, context: CallContext,
        consume: (HTTPClientResponse.Body) async throws -> Result
    ) async throws -> Result {
        let call = try rpcRequest(
            name, to: service, body: ByteBuffer(bytes: try JSONEncoder().encode(request)), context: context)
        let response = try await attempt(on: service, retryingLostConnection: false, context: context) { [call] in
            try await http.execute(call, deadline: context.deadline, logger: context.logger)
        }
        try Self.requireHTTP2(response, service: service, context: context)
        guard (200..<300).contains(response.status.code) else {
            let body = try await response.body.collect(upTo: 64 << 10)
            throw Self.envelope(from: RawResponse(status: Int(response.status.code), body: body))
        }
        return try await consume(response.body)
    }
}
