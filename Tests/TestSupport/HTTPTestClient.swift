import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A public client's view of one answer.
package struct HTTPResult: Sendable {
    /// HTTP status code.
    package let status: Int
    /// Response headers.
    package let headers: HTTPHeaders
    /// Body bytes.
    package let body: Data

    /// The body as a JSON object (empty when it is not one).
    package var json: [String: any Sendable] {
        ((try? JSONSerialization.jsonObject(with: body)) as? [String: any Sendable]) ?? [:]
    }

    /// The body as a JSON array of objects (empty when it is not one).
    package var items: [[String: any Sendable]] {
        ((try? JSONSerialization.jsonObject(with: body)) as? [[String: any Sendable]]) ?? []
    }

    /// The body as text.
    package var text: String { String(decoding: body, as: UTF8.self) }
}

/// Plain HTTP/1.1 requests to a test gateway.
package enum HTTPTestClient {
    /// Sends one request to `url`.
    package static func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: Data? = nil
    ) async throws -> HTTPResult {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(90))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return HTTPResult(status: Int(response.status.code), headers: response.headers, body: Data(buffer: bytes))
    }
}
