import NIOCore

/// HTTP/1.1 requests written byte for byte: the target goes on the wire exactly as given, which
/// URL-parsing clients do not allow for paths whose escapes are not UTF-8.
package enum RawHTTPClient {
    /// Sends `method target` to `127.0.0.1:port` with `Connection: close` and answers the
    /// status code and the raw response (head and body). The body's length is declared unless
    /// `headers` frame it themselves.
    package static func send(
        port: Int, method: String, target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> (status: Int, response: String) {
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        let framed = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
        request += framed ? "\r\n" : "Content-Length: \(body.count)\r\n\r\n"
        let text = try await RawConnection.with(port: port) { inbound, outbound in
            try await outbound.write(ByteBuffer(bytes: Array(request.utf8) + body))
            return try await inbound.untilClosed(limit: 1 << 20)
        }
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, text)
    }
}

extension RawHTTPClient {
    /// The body of a raw response (after the head), de-chunked when it was sent in chunks.
    package static func body(of response: String) -> String {
        guard let split = response.range(of: "\r\n\r\n") else { return "" }
        let head = response[..<split.lowerBound].lowercased()
        var rest = Substring(response[split.upperBound...])
        guard head.contains("transfer-encoding: chunked") else { return String(rest) }
        var body = ""
        while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16), size > 0 {
            let start = line.upperBound
            let utf8 = rest.utf8
            guard let end = utf8.index(start, offsetBy: size, limitedBy: utf8.endIndex) else { break }
            body += rest[start..<end]
            rest = rest[end...].dropFirst(2)
        }
        return body
    }
}
