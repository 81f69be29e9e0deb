import InternalProtocol

/// A path into a JSON column in the MySQL form Backendless uses: `$`, then `.key`,
/// `."quoted key"` or `[index]` steps (`$.address.city`, `$.tags[1]`).
struct JSONPath: Sendable, Equatable {
    /// One step of a path.
    enum Step: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    /// At most this many steps (PostgreSQL paths are arrays; this keeps them small).
    static let stepLimit = 32

    /// The steps after `$`.
    var steps: [Step]

    /// Parses `text`; anything else than the documented form (wildcards, `last`, ranges) is refused.
    init(_ text: String) throws {
        var rest = Substring(text)
        guard rest.first == "$", text.utf8.count <= 1024 else { throw Self.invalid(text) }
        rest = rest.dropFirst()
        steps = []
        while let first = rest.first {
            guard steps.count < Self.stepLimit else { throw Self.invalid(text) }
            switch first {
            case ".": steps.append(.key(try Self.key(&rest, text)))
            case "[": steps.append(.index(try Self.index(&rest, text)))
            default: throw Self.invalid(text)
            }
        }
    }

    /// The path as PostgreSQL's `text[]` path elements.
    var elements: [String] {
        steps.map { step in
            switch step {
            case .key(let key): key
            case .index(let index): String(index)
            }
        }
    }

    private static func key(_ rest: inout Substring, _ text: String) throws -> String {
        rest = rest.dropFirst()
        if rest.first == "\"" {
            rest = rest.dropFirst()
            guard let end = rest.firstIndex(of: "\"") else { throw invalid(text) }
            let key = String(rest[..<end])
            rest = rest[rest.index(after: end)...]
            return key
        }
        let key = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" || $0 == "-" }
        guard !key.isEmpty else { throw invalid(text) }
        rest = rest.dropFirst(key.count)
        return String(key)
    }

    private static func index(_ rest: inout Substring, _ text: String) throws -> Int {
        rest = rest.dropFirst()
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        rest = rest.dropFirst(digits.count)
        guard rest.first == "]", let index = Int(digits), index <= 1_000_000 else { throw invalid(text) }
        rest = rest.dropFirst()
        return index
    }

    private static func invalid(_ text: String) -> ErrorEnvelope {
        DataError.invalidBody("Invalid JSON path '\(text)': use $, .key, .\"key\" and [index] steps")
    }
}
