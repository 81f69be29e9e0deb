import Foundation
import NIOCore

/// Base64 in 76-character CRLF-ended lines (RFC 2045) over bytes that arrive in chunks of any
/// size: whole lines go out as each chunk comes, fewer than 57 bytes wait for the next.
struct Base64Lines {
    /// The bytes one line encodes.
    static let lineBytes = 57
    private var carry: [UInt8] = []

    /// The lines `chunk` completes.
    mutating func encode(_ chunk: ByteBuffer) -> ByteBuffer {
        carry += chunk.readableBytesView
        let whole = carry.count - carry.count % Self.lineBytes
        defer { carry.removeFirst(whole) }
        return Self.lines(carry[..<whole])
    }

    /// The last, shorter line (nothing when the bytes filled whole lines).
    mutating func finish() -> ByteBuffer {
        defer { carry = [] }
        return Self.lines(carry[...])
    }

    private static func lines(_ bytes: ArraySlice<UInt8>) -> ByteBuffer {
        guard !bytes.isEmpty else { return ByteBuffer() }
        let text = Data(bytes).base64EncodedString(options: [
            .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
        ])
        return ByteBuffer(string: text + "\r\n")
    }
}
