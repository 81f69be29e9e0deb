/// One item of a property list: `name`, `Count(objectId) as total`.
package struct SelectItem: Sendable, Hashable {
    /// Creates a select item.
    package init(expression: ValueExpression, alias: String?) {
        self.expression = expression
        self.alias = alias
    }

    /// The selected value.
    package var expression: ValueExpression
    /// The `as` alias.
    package var alias: String?
}

/// One `sortBy` item: `name`, `age DESC`.
package struct SortItem: Sendable, Hashable {
    /// Creates a sort item.
    package init(expression: ValueExpression, descending: Bool) {
        self.expression = expression
        self.descending = descending
    }

    /// The sorted value.
    package var expression: ValueExpression
    /// True for `DESC`.
    package var descending: Bool
}

/// Parses the Backendless where language (a SQL-92 subset) and its neighbours — update
/// expressions, property lists, sort items — into trees. One pass, no backtracking; every
/// entry point enforces ``QueryLimits``.
package enum QueryParser {
    /// A where clause. `parameters` fill `?` placeholders in order (BQL).
    package static func condition(
        _ text: String, parameters: [ValueExpression] = [], limits: QueryLimits = .standard
    ) throws(QueryLanguageError) -> Condition {
        var parser = try Parser(text, parameters: parameters, limits: limits)
        let node = try parser.expression()
        try parser.expectEnd()
        return try parser.asCondition(node)
    }

    /// A value expression such as the `BackendlessExpression` `age + 1`.
    package static func value(_ text: String, limits: QueryLimits = .standard) throws(QueryLanguageError)
        -> ValueExpression
    {
        var parser = try Parser(text, parameters: [], limits: limits)
        let value = try parser.asValue(try parser.additive())
        try parser.expectEnd()
        return value
    }

    /// One property-list item: a value with an optional `as alias`.
    package static func selectItem(_ text: String, limits: QueryLimits = .standard) throws(QueryLanguageError)
        -> SelectItem
    {
        var parser = try Parser(text, parameters: [], limits: limits)
        let value = try parser.asValue(try parser.additive())
        var alias: String?
        if try parser.takeKeyword("AS") { alias = try parser.identifier() }
        try parser.expectEnd()
        return SelectItem(expression: value, alias: alias)
    }

    /// One sort item: a value with an optional `ASC`/`DESC`.
    package static func sortItem(_ text: String, limits: QueryLimits = .standard) throws(QueryLanguageError)
        -> SortItem
    {
        var parser = try Parser(text, parameters: [], limits: limits)
        let value = try parser.asValue(try parser.additive())
        var descending = false
        if try parser.takeKeyword("DESC") {
            descending = true
        } else {
            _ = try parser.takeKeyword("ASC")
        }
        try parser.expectEnd()
        return SortItem(expression: value, descending: descending)
    }
}

/// The recursive-descent parser behind ``QueryParser``.
struct Parser {
    /// A parsed piece that is either a value or a condition until its context decides.
    enum Node {
        case value(ValueExpression)
        case condition(Condition)
    }

    private var tokens: TokenStream
    private var depth = 0
    private var parameters: [ValueExpression]
    private var parameterIndex = 0
    private let limits: QueryLimits

    init(_ text: String, parameters: [ValueExpression], limits: QueryLimits) throws(QueryLanguageError) {
        guard text.utf8.count <= limits.maximumLength else {
            throw QueryLanguageError(.tooComplex, "The clause is longer than \(limits.maximumLength) bytes")
        }
        tokens = TokenStream(Lexer(text, limits: limits))
        self.parameters = parameters
        self.limits = limits
    }

    // MARK: Conditions

    mutating func expression() throws(QueryLanguageError) -> Node {
        let first = try conjunction()
        guard try tokens.peek().keyword == "OR" else { return first }
        var terms = [try asCondition(first)]
        while try takeKeyword("OR") { terms.append(try asCondition(try conjunction())) }
        return .condition(.or(terms))
    }

    private mutating func conjunction() throws(QueryLanguageError) -> Node {
        let first = try negation()
        guard try tokens.peek().keyword == "AND" else { return first }
        var terms = [try asCondition(first)]
        while try takeKeyword("AND") { terms.append(try asCondition(try negation())) }
        return .condition(.and(terms))
    }

    private mutating func negation() throws(QueryLanguageError) -> Node {
        guard try takeKeyword("NOT") else { return try predicate() }
        try descend()
        defer { depth -= 1 }
        return .condition(.not(try asCondition(try negation())))
    }

    private mutating func predicate() throws(QueryLanguageError) -> Node {
        let left = try additive()
        guard case .value(let value) = left else { return left }
        if let comparison = try takeComparison() {
            return .condition(.comparison(value, comparison, try asValue(try additive())))
        }
        if try takeKeyword("IS") {
            let negated = try takeKeyword("NOT")
            try expectKeyword("NULL")
            return .condition(.nullCheck(value, isNull: !negated))
        }
        let negated = try takeKeyword("NOT")
        if try takeKeyword("LIKE") {
            let pattern = try asValue(try additive())
            if case .string(let text) = pattern { try LikePattern.requireWithin(limits, text) }
            return .condition(.like(value, pattern: pattern, negated: negated))
        }
        if try takeKeyword("IN") { return .condition(.membership(value, try inList(), negated: negated)) }
        if try takeKeyword("BETWEEN") {
            let low = try asValue(try additive())
            try expectKeyword("AND")
            let high = try asValue(try additive())
            return .condition(.between(value, low, high, negated: negated))
        }
        if negated { throw try unexpected("LIKE, IN or BETWEEN after NOT") }
        return left
    }

    /// `=`, `!=`, `<>`, `<`, `<=`, `>`, `>=`, `=>` and the date keywords.
    private mutating func takeComparison() throws(QueryLanguageError) -> ComparisonOperator? {
        if case .symbol(let symbol) = try tokens.peek() {
            let found: ComparisonOperator? =
                switch symbol {
                case "=", "==": .equal
                case "!=", "<>": .notEqual
                case "<": .less
                case "<=": .lessOrEqual
                case ">": .greater
                case ">=", "=>": .greaterOrEqual
                default: nil
                }
            if found != nil { tokens.take() }
            return found
        }
        if try takeKeyword("AFTER") { return .greater }
        if try takeKeyword("BEFORE") { return .less }
        if try tokens.peek().keyword == "AT", try tokens.peek(1).keyword == "OR" {
            if try tokens.peek(2).keyword == "AFTER" {
                tokens.take(3)
                return .greaterOrEqual
            }
            if try tokens.peek(2).keyword == "BEFORE" {
                tokens.take(3)
                return .lessOrEqual
            }
        }
        return nil
    }

    private mutating func inList() throws(QueryLanguageError) -> [ValueExpression] {
        if case .symbol("?") = try tokens.peek() {
            tokens.take()
            if case .list(let items) = try nextParameter() { return items }
            throw QueryLanguageError(.syntax, "The parameter after IN must be a list")
        }
        try expectSymbol("(")
        var items = [try asValue(try additive())]
        while try takeSymbol(",") { items.append(try asValue(try additive())) }
        try expectSymbol(")")
        return items
    }

    // MARK: Values

    mutating func additive() throws(QueryLanguageError) -> Node {
        var left = try multiplicative()
        while let symbol = try takeSymbol(in: ["+", "-"]) {
            let right = try asValue(try multiplicative())
            left = .value(.arithmetic(ArithmeticOperator(rawValue: symbol)!, try asValue(left), right))
        }
        return left
    }

    private mutating func multiplicative() throws(QueryLanguageError) -> Node {
        var left = try unary()
        while let symbol = try takeSymbol(in: ["*", "/", "%"]) {
            let right = try asValue(try unary())
            left = .value(.arithmetic(ArithmeticOperator(rawValue: symbol)!, try asValue(left), right))
        }
        return left
    }

    private mutating func unary() throws(QueryLanguageError) -> Node {
        guard try takeSymbol("-") else { return try primary() }
        try descend()
        defer { depth -= 1 }
        switch try asValue(try unary()) {
        case .integer(let value): return .value(.integer(-value))
        case .number(let value): return .value(.number(-value))
        case let other: return .value(.negated(other))
        }
    }

    private mutating func primary() throws(QueryLanguageError) -> Node {
        let token = try tokens.peek()
        switch token {
        case .string, .integer, .number, .symbol("("), .symbol("?"), .identifier: tokens.take()
        default: throw unexpected("a value", found: token)
        }
        switch token {
        case .string(let value): return .value(.string(value))
        case .integer(let value): return .value(.integer(value))
        case .number(let value): return .value(.number(value))
        case .symbol("("):
            try descend()
            defer { depth -= 1 }
            let inner = try expression()
            try expectSymbol(")")
            return inner
        case .symbol("?"): return .value(try nextParameter())
        case .identifier(let name): return .value(try named(name))
        default: throw unexpected("a value", found: token)
        }
    }

    /// A literal keyword, a function call or a property path starting with `name`.
    private mutating func named(_ name: String) throws(QueryLanguageError) -> ValueExpression {
        switch name.uppercased() {
        case "TRUE": return .boolean(true)
        case "FALSE": return .boolean(false)
        case "NULL": return .null
        default: break
        }
        if try takeSymbol("(") { return try functionCall(name.lowercased()) }
        var inverse: PropertyPath.Inverse?
        var segments = [name]
        if try takeSymbol("[") {
            inverse = PropertyPath.Inverse(table: name, column: try identifier())
            try expectSymbol("]")
            try expectSymbol(".")
            segments = [try identifier()]
        }
        while try takeSymbol(".") { segments.append(try identifier()) }
        return .property(PropertyPath(segments, inverse: inverse))
    }

    private mutating func functionCall(_ name: String) throws(QueryLanguageError) -> ValueExpression {
        try descend()
        defer { depth -= 1 }
        var arguments: [ValueExpression] = []
        if try takeSymbol("*") {
            arguments = [.property(PropertyPath(["*"]))]
        } else if try !isSymbol(")") {
            arguments.append(try asValue(try additive()))
            while try takeSymbol(",") { arguments.append(try asValue(try additive())) }
        }
        try expectSymbol(")")
        return .function(name, arguments)
    }

    private mutating func nextParameter() throws(QueryLanguageError) -> ValueExpression {
        guard parameterIndex < parameters.count else {
            throw QueryLanguageError(.syntax, "Not enough parameters for the placeholders in the query")
        }
        defer { parameterIndex += 1 }
        return parameters[parameterIndex]
    }

    // MARK: Helpers

    mutating func asCondition(_ node: Node) throws(QueryLanguageError) -> Condition {
        switch node {
        case .condition(let condition): return condition
        case .value(.boolean(let value)): return .constant(value)
        case .value: throw try unexpected("a comparison")
        }
    }

    func asValue(_ node: Node) throws(QueryLanguageError) -> ValueExpression {
        guard case .value(let value) = node else {
            throw QueryLanguageError(.syntax, "A condition cannot be used as a value")
        }
        return value
    }

    private mutating func descend() throws(QueryLanguageError) {
        depth += 1
        if depth > limits.maximumDepth {
            throw QueryLanguageError(.tooComplex, "The clause is nested deeper than \(limits.maximumDepth) levels")
        }
    }

    mutating func identifier() throws(QueryLanguageError) -> String {
        guard case .identifier(let name) = try tokens.peek() else { throw try unexpected("a name") }
        tokens.take()
        return name
    }

    mutating func takeKeyword(_ keyword: String) throws(QueryLanguageError) -> Bool {
        guard try tokens.peek().keyword == keyword else { return false }
        tokens.take()
        return true
    }

    private mutating func expectKeyword(_ keyword: String) throws(QueryLanguageError) {
        guard try takeKeyword(keyword) else { throw try unexpected(keyword) }
    }

    private mutating func isSymbol(_ symbol: String) throws(QueryLanguageError) -> Bool {
        try tokens.peek() == .symbol(symbol)
    }

    private mutating func takeSymbol(_ symbol: String) throws(QueryLanguageError) -> Bool {
        guard try isSymbol(symbol) else { return false }
        tokens.take()
        return true
    }

    private mutating func takeSymbol(in symbols: Set<String>) throws(QueryLanguageError) -> String? {
        guard case .symbol(let symbol) = try tokens.peek(), symbols.contains(symbol) else { return nil }
        tokens.take()
        return symbol
    }

    private mutating func expectSymbol(_ symbol: String) throws(QueryLanguageError) {
        guard try takeSymbol(symbol) else { throw try unexpected("'\(symbol)'") }
    }

    mutating func expectEnd() throws(QueryLanguageError) {
        guard try tokens.peek() == .end else { throw try unexpected("end of input") }
    }

    /// A syntax error naming what was expected and the current token.
    private mutating func unexpected(_ expected: String) throws(QueryLanguageError) -> QueryLanguageError {
        unexpected(expected, found: try tokens.peek())
    }

    private func unexpected(_ expected: String, found: Token) -> QueryLanguageError {
        QueryLanguageError(.syntax, "Expected \(expected) but found \(found.text) (token \(tokens.taken + 1))")
    }
}
