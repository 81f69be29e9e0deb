import InternalProtocol
import NIOCore

/// Reads the `file` field of a `multipart/form-data` body as it streams: ``open()`` skips to
/// the field's part, ``FileBytes`` then yields its bytes and ends only at the part's closing
/// delimiter (a body cut short fails instead), and ``finish()`` reads what follows.
final class MultipartFileReader<Upstream: AsyncIteratorProtocol> where Upstream.Element == ByteBuffer {
    /// The form field the SDKs send a file in.
    static var fieldName: String { "file" }

    private var upstream: Upstream
    private var scanner: MultipartScanner
    private var inFile = false

    init(upstream: Upstream, boundary: String) throws(ErrorEnvelope) {
        self.upstream = upstream
        scanner = try MultipartScanner(boundary: boundary)
    }

    /// Moves to the `file` part and answers its headers; 8010 when the body has none.
    func open() async throws -> [String: String] {
        while let event = try await nextEvent() {
            guard case .part(let headers) = event else { continue }
            let disposition = HeaderParameters(headers["content-disposition"] ?? "")
            if disposition["name"] == Self.fieldName {
                inFile = true
                return headers
            }
        }
        throw FileError.missingField(Self.fieldName)
    }

    /// The next bytes of the file part; nil once its closing delimiter has been read.
    func nextFileBytes() async throws -> ByteBuffer? {
        guard inFile else { return nil }
        while let event = try await nextEvent() {
            switch event {
            case .body(let bytes): return bytes
            case .partEnd:
                inFile = false
                return nil
            case .part: continue
            }
        }
        throw FileError.invalidBody("The multipart body ends inside the file")
    }

    /// Reads the rest of the body (other fields are ignored), checking it is well formed.
    func finish() async throws {
        while try await nextEvent() != nil {}
    }

    private func nextEvent() async throws -> MultipartScanner.Event? {
        while true {
            if let event = try scanner.next() { return event }
            if scanner.isComplete { return nil }
            guard let chunk = try await upstream.next() else {
                scanner.endInput()
                continue
            }
            scanner.feed(chunk)
        }
    }

    /// The file part's bytes as a sequence, for storage to write.
    struct FileBytes: AsyncSequence {
        typealias Element = ByteBuffer
        let reader: MultipartFileReader

        struct AsyncIterator: AsyncIteratorProtocol {
            let reader: MultipartFileReader
            mutating func next() async throws -> ByteBuffer? { try await reader.nextFileBytes() }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: reader) }
    }
}

/// A header value with `;`-separated parameters: `form-data; name="file"; filename="a.txt"`.
struct HeaderParameters {
    /// The part before the first `;`, trimmed.
    let value: String
    private var parameters: [String: String] = [:]

    init(_ header: String) {
        var parts = header.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        value = String(parts.next() ?? "").trimmingBlanks
        while let part = parts.next() {
            guard let equals = part.firstIndex(of: "=") else { continue }
            var parameter = String(part[part.index(after: equals)...]).trimmingBlanks
            if parameter.count >= 2, parameter.hasPrefix("\""), parameter.hasSuffix("\"") {
                parameter = String(parameter.dropFirst().dropLast()).replacingEscapes
            }
            parameters[String(part[..<equals]).trimmingBlanks.lowercased()] = parameter
        }
    }

    subscript(name: String) -> String? { parameters[name] }
}

extension String {
    /// A quoted string's `\x` escapes resolved.
    fileprivate var replacingEscapes: String {
        var result = ""
        var escaping = false
        for character in self {
            if escaping || character != "\\" {
                result.append(character)
                escaping = false
            } else {
                escaping = true
            }
        }
        return result
    }
}

extension MultipartScanner {
    /// The `boundary` parameter of a `multipart/form-data` content type; nil for another type.
    package static func boundary(contentType: String) throws(ErrorEnvelope) -> String? {
        let parameters = HeaderParameters(contentType)
        guard parameters.value.lowercased() == "multipart/form-data" else { return nil }
        guard let boundary = parameters["boundary"], !boundary.isEmpty else {
            throw FileError.invalidBody("A multipart/form-data body needs a boundary parameter")
        }
        return boundary
    }

}
