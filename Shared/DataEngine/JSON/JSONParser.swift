/// Why a request body is not acceptable JSON.
package struct JSONParseError: Error, Sendable, CustomStringConvertible {
    /// A message for the client.
    package var message: String
    package var description: String { message }
}

/// A strict RFC 8259 parser into ``JSONValue`` with limits on nesting, on the keys of one
/// object and on the values of one document, and duplicate-key refusal. Keys are checked for duplicates by hashing, so parsing
/// stays linear in the document's size.
package struct JSONParser {
    /// The deepest nesting a document may have unless the caller says otherwise.
    package static let defaultMaximumDepth = 64
    /// The most keys one object may have unless the caller says otherwise: ten times the
    /// columns a table may hold, so any object a table can store fits, while an object of
    /// hundreds of thousands of keys (whose every key later costs a schema lookup) does not.
    package static let defaultMaximumKeys = 10_000
    /// The most values (of any kind, at any depth) one document may hold: more than the largest
    /// bulk write needs, while a 16 MB array of two-byte numbers — eight million values, seconds
    /// of a service's time for an anonymous caller — is refused as it is read (second probe, F6).
    package static let maximumValues = 250_000

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    private let maximumDepth: Int
    private let maximumKeys: Int
    private var values = 0

    /// Parses `bytes` as one JSON document nested at most `maximumDepth` deep, with at most
    /// `maximumKeys` keys in any one object.
    package static func parse(
        _ bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth,
        maximumKeys: Int = JSONParser.defaultMaximumKeys
    ) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth, maximumKeys: maximumKeys)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected data after the document") }
        return value
    }

    /// Parses a string as one JSON document, within the same limits.
    package static func parse(
        _ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth,
        maximumKeys: Int = JSONParser.defaultMaximumKeys
    ) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth, maximumKeys: maximumKeys)
    }

    private init(bytes: [UInt8], maximumDepth: Int, maximumKeys: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.maximumKeys = maximumKeys
    }

    private func failure(_ reason: String) -> JSONParseError {
        JSONParseError(message: "Malformed JSON at byte \(index): \(reason)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end") }
        values += 1
        guard values <= Self.maximumValues else {
            throw failure("a document holds more than \(Self.maximumValues) values")
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try object())
        case UInt8(ascii: "["): return .array(try array())
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw failure("invalid literal")
        }
        index += utf8.count
        return value
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        guard depth <= maximumDepth else { throw failure("nested deeper than \(maximumDepth) levels") }
        index += 1
        skipWhitespace()
    }

    private mutating func object() throws(JSONParseError) -> JSONObject {
        try enter()
        defer { depth -= 1 }
        var members: [(key: String, value: JSONValue)] = []
        var seen = Set<String>()
        if take(UInt8(ascii: "}")) { return JSONObject(members) }
        repeat {
            skipWhitespace()
            guard members.count < maximumKeys else { throw failure("an object has more than \(maximumKeys) keys") }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try string()
            guard seen.insert(key).inserted else { throw failure("duplicate key '\(key)'") }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { throw failure("expected ':'") }
            skipWhitespace()
            members.append((key, try value()))
            skipWhitespace()
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")) else { throw failure("expected ',' or '}'") }
        return JSONObject(members)
    }

    private mutating func array() throws(JSONParseError) -> [JSONValue] {
        try enter()
        defer { depth -= 1 }
        var items: [JSONValue] = []
        if take(UInt8(ascii: "]")) { return items }
        repeat {
            skipWhitespace()
            items.append(try value())
            skipWhitespace()
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "]")) else { throw failure("expected ',' or ']'") }
        return items
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func string() throws(JSONParseError) -> String {
        index += 1
        var run = index
        var decoded: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                decoded.append(contentsOf: bytes[run..<index])
                index += 1
                guard let text = String(validating: decoded, as: UTF8.self) else { throw failure("invalid UTF-8") }
                return text
            }
            if byte < 0x20 { throw failure("control character in string") }
            if byte == UInt8(ascii: "\\") {
                decoded.append(contentsOf: bytes[run..<index])
                try escape(into: &decoded)
                run = index
                continue
            }
            index += 1
        }
        throw failure("unterminated string")
    }

    private mutating func escape(into decoded: inout [UInt8]) throws(JSONParseError) {
        index += 1
        guard index < bytes.count else { throw failure("unterminated escape") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(code)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"): decoded.append(contentsOf: Array(String(try unicodeEscape()).utf8))
        default: throw failure("invalid escape")
        }
    }

    private mutating func unicodeEscape() throws(JSONParseError) -> Character {
        let high = try hexQuad()
        if (0xD800...0xDBFF).contains(high) {
            guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")) else { throw failure("lone surrogate") }
            let low = try hexQuad()
            guard (0xDC00...0xDFFF).contains(low),
                let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            else { throw failure("invalid surrogate pair") }
            return Character(scalar)
        }
        guard let scalar = Unicode.Scalar(high) else { throw failure("lone surrogate") }
        return Character(scalar)
    }

    private mutating func hexQuad() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count,
            let text = String(validating: bytes[index..<index + 4], as: UTF8.self),
            let value = UInt32(text, radix: 16)
        else { throw failure("invalid \\u escape") }
        index += 4
        return value
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = index
        var isFraction = false
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("unexpected character") }
        if bytes[index] == UInt8(ascii: "0"), index + 1 < bytes.count, isDigit(bytes[index + 1]) {
            throw failure("leading zero")
        }
        skipDigits()
        if take(UInt8(ascii: ".")) {
            isFraction = true
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("digit expected after '.'") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            isFraction = true
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("digit expected in exponent") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if !isFraction, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else { throw failure("number out of range") }
        return .number(number)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
}
