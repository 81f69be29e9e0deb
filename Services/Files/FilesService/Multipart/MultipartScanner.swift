import InternalProtocol
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// A `multipart/form-data` body cut into parts as its bytes arrive, holding no more than one
/// part's headers and a possible partial delimiter: body bytes come out as slices of the
/// chunks fed in, never copied.
package struct MultipartScanner {
    /// What the scanner found next.
    package enum Event: Equatable {
        /// A part begins, with its header fields (names lower-cased).
        case part([String: String])
        /// Bytes of the current part's body.
        case body(ByteBuffer)
        /// The current part ended with its delimiter.
        case partEnd
    }

    private enum State {
        case preamble, afterDelimiter, headers, body, epilogue
    }

    /// The largest header block of one part.
    package static let headerLimit = 16 << 10

    private let delimiter: [UInt8]
    private var state = State.preamble
    private var pending: ByteBuffer
    private var inputEnded = false

    /// A scanner for parts separated by `boundary` (1–70 characters, RFC 2046).
    package init(boundary: String) throws(ErrorEnvelope) {
        guard (1...70).contains(boundary.utf8.count) else {
            throw FileError.invalidBody("The multipart boundary must be 1 to 70 characters")
        }
        delimiter = Array("\r\n--\(boundary)".utf8)
        // The first delimiter may open the body without the line break before it.
        pending = ByteBuffer(bytes: [13, 10])
    }

    /// Whether the closing delimiter has been read.
    package var isComplete: Bool {
        if case .epilogue = state { return true }
        return false
    }

    /// Adds the next chunk of the body.
    package mutating func feed(_ chunk: ByteBuffer) {
        if pending.readableBytes == 0 {
            pending = chunk
        } else {
            var chunk = chunk
            pending.writeBuffer(&chunk)
        }
    }

    /// Marks the end of the body: whatever is pending must now complete.
    package mutating func endInput() {
        inputEnded = true
    }

    /// The next event, or nil when more input is needed (or, once the input ended, when the
    /// body is complete). A body that breaks the format, or ends early, is a 400.
    package mutating func next() throws(ErrorEnvelope) -> Event? {
        while true {
            switch state {
            case .epilogue:
                pending.moveReaderIndex(forwardBy: pending.readableBytes)
                return nil
            case .preamble:
                guard try skipToDelimiter() else { return try needMore() }
            case .afterDelimiter:
                guard let event = try readDelimiterEnd() else { return try needMore() }
                if let event { return event }
            case .headers:
                guard let headers = try readHeaders() else { return try needMore() }
                state = .body
                return .part(headers)
            case .body:
                guard let event = readBody() else { return try needMore() }
                return event
            }
        }
    }

    private func needMore() throws(ErrorEnvelope) -> Event? {
        if inputEnded { throw FileError.invalidBody("The multipart body ends before its closing delimiter") }
        return nil
    }

    /// Drops bytes up to and including the first delimiter; false when none is complete yet.
    private mutating func skipToDelimiter() throws(ErrorEnvelope) -> Bool {
        switch search() {
        case .found(let index):
            pending.moveReaderIndex(forwardBy: index + delimiter.count)
            state = .afterDelimiter
            return true
        case .partial(let index):
            pending.moveReaderIndex(forwardBy: index)
        case .none:
            pending.moveReaderIndex(forwardBy: pending.readableBytes)
        }
        return false
    }

    /// After a delimiter: `--` closes the body, a line break opens a part's headers. Answers
    /// nil when the two bytes have not arrived, `.some(nil)` after moving on.
    private mutating func readDelimiterEnd() throws(ErrorEnvelope) -> Event?? {
        guard let pair = pending.getBytes(at: pending.readerIndex, length: 2) else { return nil }
        pending.moveReaderIndex(forwardBy: 2)
        switch pair {
        case [45, 45]: state = .epilogue
        case [13, 10]: state = .headers
        default: throw FileError.invalidBody("A multipart delimiter is followed by neither a line break nor '--'")
        }
        return .some(nil)
    }

    /// The header block ending with an empty line, once complete.
    private mutating func readHeaders() throws(ErrorEnvelope) -> [String: String]? {
        let view = pending.readableBytesView
        // A part without headers has its empty line at once; otherwise the block ends with one.
        let empty = view.starts(with: [13, 10]) ? view.startIndex..<view.startIndex + 2 : nil
        guard let end = empty ?? view.firstRange(of: [13, 10, 13, 10]) else {
            guard pending.readableBytes <= Self.headerLimit else {
                throw FileError.invalidBody("A multipart part's headers are larger than \(Self.headerLimit) bytes")
            }
            return nil
        }
        let text = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        pending.moveReaderIndex(forwardBy: end.upperBound - view.startIndex)
        var headers: [String: String] = [:]
        for line in text.split(separator: "\r\n") where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw FileError.invalidBody("A multipart header line has no ':'")
            }
            let name = line[..<colon].lowercased()
            headers[name] = String(line[line.index(after: colon)...]).trimmingBlanks
        }
        return headers
    }

    /// Body bytes before the next delimiter (or all that cannot start one), or the part's end.
    private mutating func readBody() -> Event? {
        switch search() {
        case .found(let index):
            if index > 0 { return .body(pending.readSlice(length: index)!) }
            pending.moveReaderIndex(forwardBy: delimiter.count)
            state = .afterDelimiter
            return .partEnd
        case .partial(let index):
            return index > 0 ? .body(pending.readSlice(length: index)!) : nil
        case .none:
            return pending.readableBytes > 0 ? .body(pending.readSlice(length: pending.readableBytes)!) : nil
        }
    }

    private enum Match {
        /// The delimiter starts at this offset of the pending bytes.
        case found(Int)
        /// A prefix of the delimiter runs from this offset to the end of the pending bytes.
        case partial(Int)
        case none
    }

    /// Where the delimiter (or a prefix of it reaching the end) first starts in the pending bytes.
    private func search() -> Match {
        let delimiter = delimiter
        return pending.withUnsafeReadableBytes { bytes -> Match in
            guard let base = bytes.baseAddress else { return .none }
            var offset = 0
            while offset < bytes.count {
                guard let hit = memchr(base + offset, Int32(delimiter[0]), bytes.count - offset) else { return .none }
                let start = base.distance(to: UnsafeRawPointer(hit))
                let available = min(delimiter.count, bytes.count - start)
                if memcmp(base + start, delimiter, available) == 0 {
                    return available == delimiter.count ? .found(start) : .partial(start)
                }
                offset = start + 1
            }
            return .none
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingBlanks: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
