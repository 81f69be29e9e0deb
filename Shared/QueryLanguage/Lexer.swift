/// One lexical token of the where language.
enum Token: Sendable, Equatable {
    case identifier(String)
    case string(String)
    case integer(Int64)
    case number(Double)
    /// Punctuation and operators: `( ) [ ] , . + - * / % = != <> < <= > >= => ?`.
    case symbol(String)
    case end

    /// The keyword this identifier spells, upper-cased, for case-insensitive matching.
    var keyword: String? {
        if case .identifier(let name) = self { return name.uppercased() }
        return nil
    }

    var text: String {
        switch self {
        case .identifier(let name): name
        case .string(let value): "'\(value)'"
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .symbol(let symbol): symbol
        case .end: "end of input"
        }
    }
}

/// Splits where-clause text into tokens.
struct Lexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var count = 0
    private let limits: QueryLimits

    init(_ text: String, limits: QueryLimits) {
        scalars = Array(text.unicodeScalars)
        self.limits = limits
    }

    /// The next token (`.end` once the text is exhausted), refused once more than
    /// `limits.maximumTokens` have been read, so no text beyond the limit is ever scanned.
    mutating func nextToken() throws(QueryLanguageError) -> Token {
        guard let token = try next() else { return .end }
        count += 1
        if count > limits.maximumTokens {
            throw QueryLanguageError(.tooComplex, "The where clause has more than \(limits.maximumTokens) tokens")
        }
        return token
    }

    private mutating func next() throws(QueryLanguageError) -> Token? {
        while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
        guard index < scalars.count else { return nil }
        let scalar = scalars[index]
        if scalar == "'" || scalar == "\"" { return .string(try quoted(by: scalar)) }
        if scalar == "`" { return .identifier(try quoted(by: scalar)) }
        if isDigit(scalar) || (scalar == "." && isDigit(peek(1))) { return try numeral() }
        if isIdentifierStart(scalar) { return .identifier(identifier()) }
        return try symbol()
    }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private func isDigit(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return false }
        return ("0"..."9").contains(scalar)
    }

    private func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic
    }

    /// A literal closed by `quote`, where a doubled quote stands for one.
    private mutating func quoted(by quote: Unicode.Scalar) throws(QueryLanguageError) -> String {
        let start = index
        index += 1
        var value = String.UnicodeScalarView()
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == quote {
                if peek(0) == quote {
                    value.append(quote)
                    index += 1
                    continue
                }
                return String(value)
            }
            value.append(scalar)
        }
        throw QueryLanguageError(.syntax, "Unterminated literal starting at position \(start)")
    }

    private mutating func numeral() throws(QueryLanguageError) -> Token {
        let start = index
        var isFractional = false
        while index < scalars.count {
            let scalar = scalars[index]
            if isDigit(scalar) {
                index += 1
            } else if scalar == "." && !isFractional {
                isFractional = true
                index += 1
            } else if (scalar == "e" || scalar == "E")
                && (isDigit(peek(1)) || ((peek(1) == "-" || peek(1) == "+") && isDigit(peek(2))))
            {
                isFractional = true
                index += 2
            } else {
                break
            }
        }
        let text = String(String.UnicodeScalarView(scalars[start..<index]))
        if index < scalars.count, isIdentifierStart(scalars[index]) {
            throw QueryLanguageError(.syntax, "Invalid number '\(text)\(scalars[index])' at position \(start)")
        }
        if !isFractional, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else {
            throw QueryLanguageError(.syntax, "Invalid number '\(text)' at position \(start)")
        }
        return .number(number)
    }

    private mutating func identifier() -> String {
        let start = index
        while index < scalars.count,
            isIdentifierStart(scalars[index]) || isDigit(scalars[index]) || scalars[index].properties.isAlphabetic
        {
            index += 1
        }
        return String(String.UnicodeScalarView(scalars[start..<index]))
    }

    private static let twoCharacterSymbols: Set<String> = ["!=", "<>", "<=", ">=", "=>", "=="]
    private static let oneCharacterSymbols: Set<Unicode.Scalar> = [
        "(", ")", "[", "]", ",", ".", "+", "-", "*", "/", "%", "=", "<", ">", "?",
    ]

    private mutating func symbol() throws(QueryLanguageError) -> Token {
        if let second = peek(1) {
            let pair = String(String.UnicodeScalarView([scalars[index], second]))
            if Self.twoCharacterSymbols.contains(pair) {
                index += 2
                return .symbol(pair)
            }
        }
        let scalar = scalars[index]
        guard Self.oneCharacterSymbols.contains(scalar) else {
            throw QueryLanguageError(.syntax, "Unexpected character '\(scalar)' at position \(index)")
        }
        index += 1
        return .symbol(String(scalar))
    }
}

/// The parser's view of the tokens: pulled from the lexer only as far as the parser looks, so
/// the token and depth limits stop the work at the token that crosses them, never after
/// scanning the rest of the text.
struct TokenStream {
    private var lexer: Lexer
    private var lookahead: [Token] = []
    /// How many tokens the parser has taken.
    private(set) var taken = 0

    init(_ lexer: Lexer) {
        self.lexer = lexer
    }

    /// The token `offset` places ahead of the current one, without taking it.
    mutating func peek(_ offset: Int = 0) throws(QueryLanguageError) -> Token {
        while lookahead.count <= offset { lookahead.append(try lexer.nextToken()) }
        return lookahead[offset]
    }

    /// Takes `count` tokens that have been peeked.
    mutating func take(_ count: Int = 1) {
        lookahead.removeFirst(count)
        taken += count
    }
}
