/// A subtopic: dot-separated tokens (`news.business.tokyo`). A subscription's pattern may use
/// `*` for a token: in the last position it matches that token and any after it (`com.foo.*`
/// matches `com.foo.bar` and `com.foo.abc.def`, not `com.foo`), anywhere else exactly one
/// token (`com.*.foo` matches `com.abc.foo`, not `com.foo`).
struct Subtopic: Sendable, Equatable {
    /// The tokens.
    let tokens: [Substring]

    /// The most tokens and bytes a subtopic may have.
    static let maximumTokens = 32
    static let maximumLength = 255

    /// Parses `text`; nil unless every token is non-empty and made of letters, digits, `_` or
    /// `-` (or, with `wildcards`, is `*`).
    init?(_ text: String, wildcards: Bool) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength else { return nil }
        let tokens = text.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count <= Self.maximumTokens else { return nil }
        for token in tokens {
            if wildcards, token == "*" { continue }
            guard !token.isEmpty,
                token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
            else {
                return nil
            }
        }
        self.tokens = tokens
    }

    /// Whether this pattern matches the published subtopic `published`.
    func matches(_ published: Subtopic) -> Bool {
        for (index, token) in tokens.enumerated() {
            let isLast = index == tokens.count - 1
            if token == "*" && isLast { return published.tokens.count > index }
            guard index < published.tokens.count, token == "*" || token == published.tokens[index] else { return false }
        }
        return published.tokens.count == tokens.count
    }
}
