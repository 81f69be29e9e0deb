/// A parsed BQL query: relationships to join (each with an optional `having` filter on the joined
/// objects) and the condition on the queried objects.
package struct BQLQuery: Sendable, Equatable {
    /// One `join relationship [having condition]`.
    package struct Join: Sendable, Equatable {
        /// The relationship (relation column) to load with each object.
        package var relation: String
        /// Which joined objects to load.
        package var having: Condition?
    }

    /// The condition on the queried objects (`where …`).
    package var condition: Condition = .constant(true)
    /// The relationships to load, in order.
    package var joins: [Join] = []
}

/// Backbeam's BQL: `[join r [having condition]]… [where condition]` with positional `?`
/// parameters, where `this` names the object itself. It maps onto the same ``Condition`` tree:
/// `this` becomes `objectId`, a list parameter after `in` becomes an `IN` list; each join loads
/// that relationship with the objects, its `having` choosing which joined objects come along.
package enum BQL {
    /// A query's where condition; a query that joins is refused here (``query(_:parameters:limits:)`` reads it).
    package static func condition(
        _ query: String, parameters: [ValueExpression] = [], limits: QueryLimits = .standard
    ) throws(QueryLanguageError) -> Condition {
        let parsed = try self.query(query, parameters: parameters, limits: limits)
        guard parsed.joins.isEmpty else { throw QueryLanguageError(.syntax, "This BQL query may not join") }
        return parsed.condition
    }

    /// Parses a whole query; an empty one matches everything.
    package static func query(
        _ text: String, parameters: [ValueExpression] = [], limits: QueryLimits = .standard
    ) throws(QueryLanguageError) -> BQLQuery {
        guard text.utf8.count <= limits.maximumLength else {
            throw QueryLanguageError(.tooComplex, "The query is longer than \(limits.maximumLength) bytes")
        }
        var result = BQLQuery()
        var remaining = parameters[...]
        var sawWhere = false
        for (keyword, body) in clauses(text) {
            let needed = placeholders(in: body)
            guard remaining.count >= needed else {
                throw QueryLanguageError(.syntax, "Not enough parameters for the placeholders in the query")
            }
            let own = Array(remaining.prefix(needed))
            remaining = remaining.dropFirst(needed)
            switch keyword {
            case "join":
                guard !sawWhere else { throw QueryLanguageError(.syntax, "BQL 'join' comes before 'where'") }
                let name = String(body.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
                guard isName(name) else {
                    throw QueryLanguageError(.syntax, "BQL 'join' names one relationship, not '\(name)'")
                }
                result.joins.append(BQLQuery.Join(relation: name))
            case "having":
                guard !sawWhere, let last = result.joins.indices.last, result.joins[last].having == nil else {
                    throw QueryLanguageError(.syntax, "BQL 'having' follows a 'join'")
                }
                result.joins[last].having = try condition(body, own, limits)
            default:
                guard !sawWhere else { throw QueryLanguageError(.syntax, "BQL has one 'where'") }
                sawWhere = true
                if !body.allSatisfy(\.isWhitespace) { result.condition = try condition(body, own, limits) }
            }
        }
        return result
    }

    private static func condition(_ text: String, _ parameters: [ValueExpression], _ limits: QueryLimits)
        throws(QueryLanguageError) -> Condition
    {
        try QueryParser.condition(text, parameters: parameters, limits: limits).renamingProperty("this", to: "objectId")
    }

    /// The query cut at its keywords (`join`, `having`, `where` as whole words outside quotes);
    /// text before the first keyword is a where clause.
    private static func clauses(_ text: String) -> [(keyword: String, body: String)] {
        var clauses: [(keyword: String, body: String)] = [("where", "")]
        var quoted = false
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "'" { quoted.toggle() }
            if !quoted, let found = keywordAt(index, in: text) {
                clauses.append((found, ""))
                index = text.index(index, offsetBy: found.count)
                continue
            }
            clauses[clauses.count - 1].body.append(text[index])
            index = text.index(after: index)
        }
        if clauses[0].body.allSatisfy(\.isWhitespace) { clauses.removeFirst() }
        return clauses
    }

    /// The keyword starting at `index` as a whole word, if any.
    private static func keywordAt(_ index: String.Index, in text: String) -> String? {
        if index > text.startIndex, !text[text.index(before: index)].isWhitespace { return nil }
        for keyword in ["join", "having", "where"] {
            guard let end = text.index(index, offsetBy: keyword.count, limitedBy: text.endIndex),
                text[index..<end].lowercased() == keyword, end == text.endIndex || text[end].isWhitespace
            else { continue }
            return keyword
        }
        return nil
    }

    /// `?` placeholders outside quoted literals.
    private static func placeholders(in text: String) -> Int {
        var quoted = false
        var count = 0
        for character in text {
            if character == "'" { quoted.toggle() } else if character == "?", !quoted { count += 1 }
        }
        return count
    }

    private static func isName(_ text: String) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}

/// A QuickBlox custom-object filter, mapped onto the Backendless query parts.
package struct QuickBloxQuery: Sendable, Equatable {
    /// All field filters, AND-ed (`[or]` filters grouped into one OR).
    package var condition: Condition = .constant(true)
    /// `sort_asc` / `sort_desc`.
    package var sort: [SortItem] = []
    /// `skip` (default 0).
    package var skip: Int = 0
    /// `limit` (default 100; `-1` asks for the last record only).
    package var limit: Int = 100
    /// `count=1`: answer only the number of matches.
    package var countOnly = false
    /// `output[include]`.
    package var include: [String]?
    /// `output[exclude]`.
    package var exclude: [String]?
}

/// Maps QuickBlox's query parameters onto a ``QuickBloxQuery``.
///
/// `f=v` → `f = v`; `f[lt|lte|gt|gte|ne]=v` → comparisons; `f[in]=a,b` / `f[nin]` → `[NOT] IN`;
/// `f[all]=a,b` → the JSON array holds all; `f[ctn]=v` → `LIKE '%v%'`; `f[or]=a,b` on one field
/// → `IN`, `[or]` on several fields → their OR; `f[near]=lon,lat;radius` → `distance(…) <= radius`
/// over the Location field `f`, a GeoPoint relation.
/// QuickBlox's own field names map onto system columns: `_id` → `objectId`, `created_at` →
/// `created`, `updated_at` → `updated`, `user_id` → `ownerId`. Values stay strings; the SQL
/// compiler converts them to each column's type.
package enum QuickBloxFilter {
    /// Parses `items` (query parameter name/value pairs, already percent-decoded).
    package static func parse(_ items: [(name: String, value: String)]) throws(QueryLanguageError) -> QuickBloxQuery {
        var query = QuickBloxQuery()
        var conditions: [Condition] = []
        var alternatives: [Condition] = []
        for (name, value) in items {
            if try applyOption(name, value, to: &query) { continue }
            let (field, operation) = try splitName(name)
            let property = ValueExpression.property(PropertyPath([systemName(field)]))
            if operation == "or" {
                alternatives.append(try oneOf(property, value))
            } else {
                conditions.append(try filter(property, operation, value))
            }
        }
        if !alternatives.isEmpty { conditions.append(alternatives.count == 1 ? alternatives[0] : .or(alternatives)) }
        if !conditions.isEmpty { query.condition = conditions.count == 1 ? conditions[0] : .and(conditions) }
        return query
    }

    /// Handles the non-filter parameters; false when `name` is a field filter.
    private static func applyOption(_ name: String, _ value: String, to query: inout QuickBloxQuery)
        throws(QueryLanguageError) -> Bool
    {
        switch name {
        case "sort_asc", "sort_desc":
            let field = ValueExpression.property(PropertyPath([systemName(value)]))
            query.sort.append(SortItem(expression: field, descending: name == "sort_desc"))
        case "skip": query.skip = try integer(value, for: name)
        case "limit": query.limit = try integer(value, for: name)
        case "count": query.countOnly = value == "1" || value.lowercased() == "true"
        case "output[include]": query.include = try list(value).map(systemName)
        case "output[exclude]": query.exclude = try list(value).map(systemName)
        default: return false
        }
        return true
    }

    private static func filter(_ property: ValueExpression, _ operation: String?, _ value: String)
        throws(QueryLanguageError) -> Condition
    {
        let literal = ValueExpression.string(value)
        switch operation {
        case nil: return .comparison(property, .equal, literal)
        case "lt": return .comparison(property, .less, literal)
        case "lte": return .comparison(property, .lessOrEqual, literal)
        case "gt": return .comparison(property, .greater, literal)
        case "gte": return .comparison(property, .greaterOrEqual, literal)
        case "ne": return .comparison(property, .notEqual, literal)
        case "in": return .membership(property, try list(value).map(ValueExpression.string), negated: false)
        case "nin": return .membership(property, try list(value).map(ValueExpression.string), negated: true)
        case "all": return .containsAll(property, try list(value).map(ValueExpression.string))
        case "ctn": return .like(property, pattern: .string("%\(escapeLike(value))%"), negated: false)
        case "near": return try near(property, value)
        case let other?: throw QueryLanguageError(.syntax, "Unknown QuickBlox operator '\(other)'")
        }
    }

    /// `location[near]=lon,lat;radius`: the Location field (a GeoPoint relation) lies within
    /// `radius` metres of the point, i.e. `distance(lat, lon, location.latitude, location.longitude) <= radius`.
    private static func near(_ property: ValueExpression, _ value: String) throws(QueryLanguageError) -> Condition {
        let parts = value.split(separator: ";", omittingEmptySubsequences: false)
        let point = parts.first?.split(separator: ",", omittingEmptySubsequences: false) ?? []
        guard parts.count == 2, point.count == 2,
            let longitude = Double(point[0].trimmingWhitespace), abs(longitude) <= 180,
            let latitude = Double(point[1].trimmingWhitespace), abs(latitude) <= 90,
            let radius = Double(parts[1].trimmingWhitespace), radius >= 0, radius.isFinite,
            case .property(let field) = property
        else {
            throw QueryLanguageError(
                .syntax, "'near' takes 'longitude,latitude;radius' (degrees and metres), got '\(value)'")
        }
        let distance = ValueExpression.function(
            "distance",
            [
                .number(latitude), .number(longitude), .property(PropertyPath(field.segments + ["latitude"])),
                .property(PropertyPath(field.segments + ["longitude"])),
            ])
        return .comparison(distance, .lessOrEqual, .number(radius))
    }

    private static func oneOf(_ property: ValueExpression, _ value: String) throws(QueryLanguageError) -> Condition {
        let values = try list(value)
        if values.count == 1 { return .comparison(property, .equal, .string(values[0])) }
        return .membership(property, values.map(ValueExpression.string), negated: false)
    }

    /// `rating[gt]` → (`rating`, `gt`); `rating` → (`rating`, nil).
    private static func splitName(_ name: String) throws(QueryLanguageError) -> (String, String?) {
        guard let open = name.firstIndex(of: "[") else { return (name, nil) }
        guard name.hasSuffix("]"), open != name.startIndex else {
            throw QueryLanguageError(.syntax, "Malformed QuickBlox filter '\(name)'")
        }
        let operation = name[name.index(after: open)..<name.index(before: name.endIndex)]
        return (String(name[..<open]), String(operation))
    }

    private static func systemName(_ field: String) -> String {
        switch field {
        case "_id": "objectId"
        case "created_at": "created"
        case "updated_at": "updated"
        case "user_id": "ownerId"
        default: field
        }
    }

    private static func list(_ value: String) throws(QueryLanguageError) -> [String] {
        let limit = QueryLimits.standard.maximumListItems
        guard value.utf8.lazy.filter({ $0 == UInt8(ascii: ",") }).count < limit else {
            throw QueryLanguageError(.tooComplex, "A QuickBlox list has more than \(limit) items")
        }
        return value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    private static func integer(_ value: String, for name: String) throws(QueryLanguageError) -> Int {
        guard let number = Int(value) else {
            throw QueryLanguageError(.syntax, "'\(name)' must be an integer, got '\(value)'")
        }
        return number
    }

    /// Escapes LIKE's wildcards so a `ctn` value matches literally.
    package static func escapeLike(_ value: String) -> String {
        var escaped = ""
        for character in value {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}

extension Condition {
    /// The same condition with every value rewritten by `transform` (applied bottom-up).
    package func mappingValues(_ transform: (ValueExpression) -> ValueExpression) -> Condition {
        func map(_ value: ValueExpression) -> ValueExpression { value.mapping(transform) }
        switch self {
        case .and(let items): return .and(items.map { $0.mappingValues(transform) })
        case .or(let items): return .or(items.map { $0.mappingValues(transform) })
        case .not(let inner): return .not(inner.mappingValues(transform))
        case .comparison(let left, let op, let right): return .comparison(map(left), op, map(right))
        case .like(let value, let pattern, let negated):
            return .like(map(value), pattern: map(pattern), negated: negated)
        case .membership(let value, let items, let negated):
            return .membership(map(value), items.map(map), negated: negated)
        case .nullCheck(let value, let isNull): return .nullCheck(map(value), isNull: isNull)
        case .between(let value, let low, let high, let negated):
            return .between(map(value), map(low), map(high), negated: negated)
        case .containsAll(let value, let items): return .containsAll(map(value), items.map(map))
        case .constant: return self
        }
    }

    /// The same condition with the single-segment property `name` replaced by `replacement`.
    package func replacingProperty(_ name: String, with replacement: ValueExpression) -> Condition {
        mappingValues { value in
            if case .property(let path) = value, path.column == name { return replacement }
            return value
        }
    }

    func renamingProperty(_ old: String, to new: String) -> Condition {
        replacingProperty(old, with: .property(PropertyPath([new])))
    }
}

extension ValueExpression {
    /// The value with `transform` applied to every sub-value, innermost first.
    package func mapping(_ transform: (ValueExpression) -> ValueExpression) -> ValueExpression {
        switch self {
        case .arithmetic(let op, let left, let right):
            return transform(.arithmetic(op, left.mapping(transform), right.mapping(transform)))
        case .negated(let inner): return transform(.negated(inner.mapping(transform)))
        case .function(let name, let arguments):
            return transform(.function(name, arguments.map { $0.mapping(transform) }))
        case .list(let items): return transform(.list(items.map { $0.mapping(transform) }))
        default: return transform(self)
        }
    }
}

extension Substring {
    /// The text without leading and trailing whitespace.
    fileprivate var trimmingWhitespace: Substring {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
