import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// The body of a binary save: base64 text (the SDKs send it as `text/plain`, sometimes as a
/// JSON string).
enum Base64Body {
    /// The decoded bytes; 6016 over `limit` bytes of text, 400 when it is not base64.
    static func read(_ request: Request, limit: Int) async throws -> ByteBuffer {
        let text: ByteBuffer
        do {
            text = try await PublicRoutes.body(of: request, limit: limit)
        } catch let error as ErrorEnvelope where error.status == 413 {
            throw FileError.payloadTooLarge(limit: limit)
        }
        var encoded = String(buffer: text).filter { !$0.isWhitespace }
        if encoded.hasPrefix("\""), encoded.hasSuffix("\""), encoded.count >= 2 {
            encoded = String(encoded.dropFirst().dropLast())
        }
        guard let data = Data(base64Encoded: encoded) else {
            throw FileError.invalidBody("The body must be the file's bytes in base64")
        }
        return ByteBuffer(bytes: data)
    }
}

/// One buffer as an async sequence, for storage to write.
struct SingleBuffer: AsyncSequence {
    typealias Element = ByteBuffer
    let buffer: ByteBuffer

    struct AsyncIterator: AsyncIteratorProtocol {
        var buffer: ByteBuffer?
        mutating func next() async -> ByteBuffer? {
            defer { buffer = nil }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffer: buffer) }
}
