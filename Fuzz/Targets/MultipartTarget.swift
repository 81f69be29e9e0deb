import InternalProtocol
import NIOCore

@testable import FilesService

/// Upload bodies: the bytes are a `multipart/form-data` body with the boundary ``boundary``,
/// scanned whole and in chunks cut at several places. How the body arrives must not change what
/// the scanner finds: the same parts with the same headers and bytes, and the same ending.
/// The header parameter parser reads the text and every part's headers too.
enum MultipartTarget {
    /// The boundary every input is scanned with (RFC 7578's example).
    static let boundary = "AaB03x"

    /// What a scan found: parts with their headers and body bytes, and how the body ended.
    struct Outcome: Equatable {
        var parts: [Part] = []
        /// Events after the last part ended and before the next began (there must be none).
        var strayEvents = 0
        var complete = false
        var failure: String?
    }

    /// One part as scanned.
    struct Part: Equatable {
        var headers: [String: String]
        var body: [UInt8] = []
        var ended = false
    }

    /// Scans one input as an upload body, whole and in chunks.
    static func run(_ input: [UInt8]) {
        _ = try? MultipartScanner.boundary(contentType: String(decoding: input, as: UTF8.self))
        let whole = scan(input, chunkSizes: [input.count])
        guard whole.strayEvents == 0 else { preconditionFailure("Body bytes or a part end outside any part: \(whole)") }
        for part in whole.parts { for value in part.headers.values { _ = HeaderParameters(value)["name"] } }
        // A header block larger than the limit fails only while incomplete, so only when chunked.
        guard input.count <= MultipartScanner.headerLimit else { return }
        // Byte by byte costs a feed per byte: long inputs get the other cuts, which include single bytes.
        let byteByByte = input.count <= 512 ? [[1]] : []
        for chunkSizes in byteByByte + [[7], [input.count / 2, input.count], [3, 1, 64]] {
            let chunked = scan(input, chunkSizes: chunkSizes)
            guard chunked == whole else {
                preconditionFailure("Chunks of \(chunkSizes) scan to \(chunked), whole to \(whole)")
            }
        }
    }

    /// Scans `input` fed in chunks of the sizes `chunkSizes` gives in turn (cycling).
    static func scan(_ input: [UInt8], chunkSizes: [Int]) -> Outcome {
        var outcome = Outcome()
        do throws(ErrorEnvelope) {
            var scanner = try MultipartScanner(boundary: boundary)
            var offset = 0
            var turn = 0
            while offset < input.count {
                let size = max(1, chunkSizes[turn % chunkSizes.count])
                let end = min(input.count, offset + size)
                scanner.feed(ByteBuffer(bytes: input[offset..<end]))
                offset = end
                turn += 1
                try drain(&scanner, into: &outcome)
            }
            scanner.endInput()
            try drain(&scanner, into: &outcome)
            outcome.complete = scanner.isComplete
        } catch {
            outcome.failure = error.message
        }
        return outcome
    }

    private static func drain(_ scanner: inout MultipartScanner, into outcome: inout Outcome) throws(ErrorEnvelope) {
        while let event = try scanner.next() {
            switch event {
            case .part(let headers): outcome.parts.append(Part(headers: headers))
            case .body(let bytes):
                guard let last = outcome.parts.indices.last, !outcome.parts[last].ended else {
                    outcome.strayEvents += 1
                    continue
                }
                outcome.parts[last].body += bytes.readableBytesView
            case .partEnd:
                guard let last = outcome.parts.indices.last, !outcome.parts[last].ended else {
                    outcome.strayEvents += 1
                    continue
                }
                outcome.parts[last].ended = true
            }
        }
    }
}
