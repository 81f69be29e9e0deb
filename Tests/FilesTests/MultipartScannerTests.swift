import InternalProtocol
import NIOCore
import PropertyBased
import TestSupport
import Testing

@testable import FilesService

/// The streaming multipart reader against whole bodies: however a body is cut into chunks, the
/// `file` field's bytes come out exactly, including bytes that look like the start of a
/// delimiter; bodies cut short or malformed fail instead of yielding a shorter file.
@Suite(.tags(.fast)) struct MultipartScannerTests {
    static let boundary = "----formBoundary7MA4YWxkTrZu0gW"

    static func body(file: [UInt8], extraFields: Bool = true) -> [UInt8] {
        var text = ""
        if extraFields {
            text += "preamble\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
        }
        text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
        text += "Content-Type: application/x-test\r\n\r\n"
        var bytes = Array(text.utf8) + file
        bytes += Array("\r\n--\(boundary)--\r\n".utf8)
        return bytes
    }

    /// The file's bytes read from `body` cut at `cuts`.
    static func read(_ body: [UInt8], cuts: [Int]) async throws -> (headers: [String: String], bytes: [UInt8]) {
        var chunks: [ByteBuffer] = []
        var start = 0
        for cut in (cuts.map { min($0, body.count) } + [body.count]).sorted() where cut > start {
            chunks.append(ByteBuffer(bytes: body[start..<cut]))
            start = cut
        }
        let reader = try MultipartFileReader(upstream: chunks.async.makeAsyncIterator(), boundary: boundary)
        let headers = try await reader.open()
        var bytes: [UInt8] = []
        for try await chunk in MultipartFileReader.FileBytes(reader: reader) { bytes += chunk.readableBytesView }
        try await reader.finish()
        return (headers, bytes)
    }

    /// File contents rich in delimiter prefixes: CR, LF, dashes and pieces of the boundary.
    static let pieces: [[UInt8]] = [
        Array("\r\n".utf8), Array("\r\n--".utf8), Array("\r\n--\(boundary.prefix(10))".utf8),
        Array("--\(boundary)".utf8),
        [13], [10], [45],
    ]
    /// A byte (0–255) or one of ``pieces`` (256…).
    static func piece(_ index: Int) -> [UInt8] { index < 256 ? [UInt8(index)] : pieces[index - 256] }

    @Test func anyChunkingYieldsTheFileExactly() async {
        let file = Gen.int(in: 0...(255 + Self.pieces.count)).array(of: 0...60)
        await propertyCheck(count: 200, input: file, Gen.int(in: 0...400).array(of: 0...12)) { pieces, cuts in
            let file = pieces.flatMap(Self.piece)
            let body = Self.body(file: file)
            let read = try await Self.read(body, cuts: cuts)
            #expect(read.bytes == file)
            #expect(read.headers["content-type"] == "application/x-test")
        }
    }

    @Test func aBodyCutShortFails() async throws {
        let body = Self.body(file: Array(repeating: 7, count: 1000))
        for end in [10, 200, body.count - 30, body.count - 3] {
            await #expect(throws: ErrorEnvelope.self, "cut at \(end)") {
                _ = try await Self.read(Array(body.prefix(end)), cuts: [end / 2])
            }
        }
    }

    @Test func aBodyWithoutTheFileFieldIs8010() async throws {
        let body = Array(
            "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--\(Self.boundary)--\r\n"
                .utf8)
        do {
            _ = try await Self.read(body, cuts: [])
            Issue.record("no error")
        } catch let error as ErrorEnvelope {
            #expect(error.code == 8010)
        }
    }

    @Test func malformedBodiesAndBoundariesAre400() async throws {
        #expect(throws: ErrorEnvelope.self) { _ = try MultipartScanner(boundary: "") }
        #expect(throws: ErrorEnvelope.self) { _ = try MultipartScanner(boundary: String(repeating: "b", count: 71)) }
        let oversizedHeaders = "--\(Self.boundary)\r\nX: " + String(repeating: "h", count: 20_000)
        await #expect(throws: ErrorEnvelope.self) { _ = try await Self.read(Array(oversizedHeaders.utf8), cuts: []) }
        let badDelimiter = "--\(Self.boundary)XX"
        await #expect(throws: ErrorEnvelope.self) { _ = try await Self.read(Array(badDelimiter.utf8), cuts: []) }
        #expect(try MultipartScanner.boundary(contentType: "multipart/form-data; boundary=\"a b\"") == "a b")
        #expect(try MultipartScanner.boundary(contentType: "application/json") == nil)
    }
}

extension Array {
    /// The elements as an async sequence.
    var async: AsyncElements<Self> { AsyncElements(elements: self) }
}

/// A collection's elements as an async sequence.
struct AsyncElements<Elements: Collection>: AsyncSequence {
    typealias Element = Elements.Element
    let elements: Elements

    struct AsyncIterator: AsyncIteratorProtocol {
        var iterator: Elements.Iterator
        mutating func next() async -> Elements.Element? { iterator.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(iterator: elements.makeIterator()) }
}
