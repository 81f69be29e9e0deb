import Crypto
import NIOCore

/// A deterministic byte stream of any length, made chunk by chunk: byte `i` is `i % 251`, so any
/// range can be produced and checked without holding the whole.
package struct BytePattern: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer

    /// Bytes `range` of the pattern.
    package let range: Range<Int>
    /// When set, the sequence throws once it has produced this many bytes (a client giving up).
    package var failAfter: Int?

    /// Bytes `range`, failing after `failAfter` bytes when set.
    package init(range: Range<Int>, failAfter: Int? = nil) {
        self.range = range
        self.failAfter = failAfter
    }

    static let chunkSize = 64 << 10
    private static let block: [UInt8] = (0..<(chunkSize + 251)).map { UInt8($0 % 251) }

    /// Bytes `start..<end` of the pattern in one buffer.
    package static func bytes(_ range: Range<Int>) -> ByteBuffer {
        var buffer = ByteBuffer()
        forEachSlice(of: range) { buffer.writeBytes($0) }
        return buffer
    }

    /// The SHA-256 of bytes `range`, as lower-case hex.
    package static func sha256(_ range: Range<Int>) -> String {
        var hash = SHA256()
        forEachSlice(of: range) { hash.update(data: $0) }
        return hex(hash.finalize())
    }

    /// Calls `body` with the pattern's bytes `range`, a chunk at a time.
    private static func forEachSlice(of range: Range<Int>, _ body: (ArraySlice<UInt8>) -> Void) {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Swift.min(chunkSize, range.upperBound - offset)
            let start = offset % 251
            body(block[start..<start + count])
            offset += count
        }
    }

    /// Lower-case hex of `digest`.
    package static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    struct Abandoned: Error {}

    package struct AsyncIterator: AsyncIteratorProtocol {
        var offset: Int
        let end: Int
        let failAfter: Int?

        package mutating func next() async throws -> ByteBuffer? {
            if let failAfter, offset >= failAfter { throw Abandoned() }
            guard offset < end else { return nil }
            let count = Swift.min(BytePattern.chunkSize, end - offset)
            defer { offset += count }
            return BytePattern.bytes(offset..<offset + count)
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(offset: range.lowerBound, end: range.upperBound, failAfter: failAfter)
    }
}
