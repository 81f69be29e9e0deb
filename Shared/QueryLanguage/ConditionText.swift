/// Conditions written back as BQL text, the way a client could have sent them: a bulk
/// operation's change event names the rows it touched with it (`objectId IN ('a', 'b')` for a
/// bulk operation by ids). Parsing the text gives the same tree back.
extension Condition {
    /// The condition as BQL.
    package var text: String {
        switch self {
        case .and(let items): items.isEmpty ? "true = true" : items.map { "(\($0.text))" }.joined(separator: " AND ")
        case .or(let items): items.isEmpty ? "true = false" : items.map { "(\($0.text))" }.joined(separator: " OR ")
        case .not(let inner): "NOT (\(inner.text))"
        case .comparison(let left, let op, let right): "\(left.text) \(op.rawValue) \(right.text)"
        case .like(let value, let pattern, let negated):
            "\(value.text) \(negated ? "NOT LIKE" : "LIKE") \(pattern.text)"
        case .membership(let value, let items, let negated):
            "\(value.text) \(negated ? "NOT IN" : "IN") (\(items.map(\.text).joined(separator: ", ")))"
        case .nullCheck(let value, let isNull): "\(value.text) IS \(isNull ? "NULL" : "NOT NULL")"
        case .between(let value, let low, let high, let negated):
            "\(value.text) \(negated ? "NOT BETWEEN" : "BETWEEN") \(low.text) AND \(high.text)"
        case .containsAll(let value, let items): "\(value.text) all (\(items.map(\.text).joined(separator: ", ")))"
        case .constant(let truth): truth ? "true = true" : "true = false"
        }
    }
}

extension ValueExpression {
    /// The value as BQL.
    package var text: String {
        switch self {
        case .property(let path): Self.text(of: path)
        case .string(let string): "'\(string.replacingAll("'", with: "''"))'"
        case .integer(let integer): String(integer)
        case .number(let number): "\(number)"
        case .boolean(let bool): bool ? "true" : "false"
        case .null: "null"
        case .arithmetic(let op, let left, let right): "(\(left.text) \(op.rawValue) \(right.text))"
        case .negated(let inner): "-(\(inner.text))"
        case .function(let name, let arguments): "\(name)(\(arguments.map(\.text).joined(separator: ", ")))"
        case .list(let items): "(\(items.map(\.text).joined(separator: ", ")))"
        }
    }

    /// Each name quoted on its own: quoting the whole path would read back as one name.
    private static func text(of path: PropertyPath) -> String {
        let inverse = path.inverse.map { "\(quoted($0.table))[\(quoted($0.column))]." } ?? ""
        return inverse + path.segments.map(quoted).joined(separator: ".")
    }

    private static func quoted(_ name: String) -> String {
        isPlainName(name) ? name : "`\(name.replacingAll("`", with: "``"))`"
    }

    private static func isPlainName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}

extension String {
    // Scalar by scalar, as the lexer reads: a quote followed by a combining mark is one Character.
    fileprivate func replacingAll(_ target: Unicode.Scalar, with replacement: String) -> String {
        var result = ""
        for scalar in unicodeScalars {
            if scalar == target { result += replacement } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}
