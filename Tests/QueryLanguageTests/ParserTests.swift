import QueryLanguage
import Testing

/// The where language's grammar, its limits, and the BQL and QuickBlox mappings.
@Suite(.tags(.fast)) struct ParserTests {
    static let age = ValueExpression.property(PropertyPath(["age"]))
    static let name = ValueExpression.property(PropertyPath(["name"]))

    static let cases: [(String, Condition)] = [
        ("age = 21", .comparison(age, .equal, .integer(21))),
        ("age>21", .comparison(age, .greater, .integer(21))),
        ("age <> 1", .comparison(age, .notEqual, .integer(1))),
        ("age => 1", .comparison(age, .greaterOrEqual, .integer(1))),
        ("age after 5", .comparison(age, .greater, .integer(5))),
        ("age AT OR BEFORE 5", .comparison(age, .lessOrEqual, .integer(5))),
        ("name like 'a%'", .like(name, pattern: .string("a%"), negated: false)),
        ("name NOT IN ('a', 'b''c')", .membership(name, [.string("a"), .string("b'c")], negated: true)),
        ("name is not null", .nullCheck(name, isNull: false)),
        ("age between 1 and 2", .between(age, .integer(1), .integer(2), negated: false)),
        (
            "not age = 1 or name = 'x' and age < 2.5",
            .or([
                .not(.comparison(age, .equal, .integer(1))),
                .and([.comparison(name, .equal, .string("x")), .comparison(age, .less, .number(2.5))]),
            ])
        ),
        (
            "(age + 1) * 2 = -4",
            .comparison(.arithmetic(.multiply, .arithmetic(.add, age, .integer(1)), .integer(2)), .equal, .integer(-4))
        ),
        (
            "Person[friends].address.city = 'X'",
            .comparison(
                .property(PropertyPath(["address", "city"], inverse: .init(table: "Person", column: "friends"))),
                .equal, .string("X"))
        ),
        (
            "distance(1, 2, c.latitude, c.longitude) < mi(200)",
            .comparison(
                .function(
                    "distance",
                    [
                        .integer(1), .integer(2), .property(PropertyPath(["c", "latitude"])),
                        .property(PropertyPath(["c", "longitude"])),
                    ]),
                .less, .function("mi", [.integer(200)]))
        ),
    ]

    @Test(arguments: cases) func parses(_ text: String, _ expected: Condition) throws {
        #expect(try QueryParser.condition(text) == expected)
    }

    @Test(arguments: [
        "", "age =", "age = 'open", "= 1", "age = 1 2", "age ! 1", "name LIKE", "age IN ()", "12abc = 1", "a = 1;",
    ])
    func refuses(_ text: String) {
        #expect(throws: QueryLanguageError.self) { try QueryParser.condition(text) }
    }

    @Test func limitsDepthLengthAndTokens() {
        let deep = String(repeating: "(", count: 40) + "a = 1" + String(repeating: ")", count: 40)
        #expect(throws: QueryLanguageError(.tooComplex, "The clause is nested deeper than 32 levels")) {
            try QueryParser.condition(deep)
        }
        #expect(throws: QueryLanguageError.self) {
            try QueryParser.condition(String(repeating: "a = 1 OR ", count: 8000) + "a = 1")
        }
        let small = QueryLimits(maximumLength: 100, maximumDepth: 4, maximumTokens: 10)
        #expect(throws: QueryLanguageError.self) {
            try QueryParser.condition("a = 1 AND b = 2 AND c = 3", limits: small)
        }
    }

    /// Each limit stops the scan at the token that crosses it: a lexical error placed beyond
    /// the limit is never reached, so the refusal is the limit's, not the syntax error's.
    @Test func limitsStopTheScanWhereTheyAreCrossed() {
        let deep = String(repeating: "(", count: 5_000) + "a = 1" + String(repeating: ")", count: 5_000) + " ;"
        #expect(throws: QueryLanguageError(.tooComplex, "The clause is nested deeper than 32 levels")) {
            try QueryParser.condition(deep)
        }
        let negations = String(repeating: "NOT ", count: 5_000) + "a = 1 ;"
        #expect(throws: QueryLanguageError(.tooComplex, "The clause is nested deeper than 32 levels")) {
            try QueryParser.condition(negations)
        }
        let minuses = "a = " + String(repeating: "- ", count: 5_000) + "1 ;"
        #expect(throws: QueryLanguageError(.tooComplex, "The clause is nested deeper than 32 levels")) {
            try QueryParser.condition(minuses)
        }
        let long = "a IN (" + (1...12_000).map(String.init).joined(separator: ",") + ") ;"
        let roomy = QueryLimits(maximumLength: 1 << 20)
        #expect(throws: QueryLanguageError(.tooComplex, "The where clause has more than 10000 tokens")) {
            try QueryParser.condition(long, limits: roomy)
        }
        let twentyThousand = "a IN (" + (1...20_000).map(String.init).joined(separator: ",") + ")"
        #expect(throws: QueryLanguageError(.tooComplex, "The clause is longer than 65536 bytes")) {
            try QueryParser.condition(twentyThousand)
        }
    }

    @Test func quickBloxListsAreBounded() {
        let items = (1...1_001).map(String.init).joined(separator: ",")
        #expect(throws: QueryLanguageError(.tooComplex, "A QuickBlox list has more than 1000 items")) {
            try QuickBloxFilter.parse([("v[in]", items)])
        }
        #expect(throws: Never.self) { try QuickBloxFilter.parse([("v[in]", String(items.dropLast(5)))]) }
    }

    /// Bulk operations' change events carry ``Condition/text``: it must read back as the same
    /// tree. `Fuzz/run.sh where` found a quoted whole path read back as one name, and a quote
    /// followed by a combining mark (one Character) left undoubled.
    @Test(arguments: [
        "Person[friend].nam$e = 'X'", "`a.b` = 1", "a.`b c` = 1", "`we``ird`.x IS NULL", "`T-1`[`r s`].n > 2",
        "name = 'x''\u{301}y'", "`a``\u{301}` = 1",
    ])
    func textReadsBackAsTheSameCondition(_ clause: String) throws {
        let condition = try QueryParser.condition(clause)
        #expect(try QueryParser.condition(condition.text) == condition)
    }

    @Test func selectAndSortItems() throws {
        #expect(
            try QueryParser.selectItem("Count(objectId) as total")
                == SelectItem(expression: .function("count", [.property(PropertyPath(["objectId"]))]), alias: "total"))
        #expect(try QueryParser.sortItem("age desc") == SortItem(expression: Self.age, descending: true))
        #expect(try QueryParser.sortItem("age ASC") == SortItem(expression: Self.age, descending: false))
        #expect(throws: QueryLanguageError.self) { try QueryParser.sortItem("age; DROP") }
    }

    @Test func bqlMapsThisAndParameters() throws {
        #expect(
            try BQL.condition("where age > ?", parameters: [.integer(3)])
                == .comparison(Self.age, .greater, .integer(3)))
        let objectId = ValueExpression.property(PropertyPath(["objectId"]))
        #expect(
            try BQL.condition("where this in ?", parameters: [.list([.string("A"), .string("B")])])
                == .membership(objectId, [.string("A"), .string("B")], negated: false))
        #expect(try BQL.condition("") == .constant(true))
        #expect(throws: QueryLanguageError.self) {
            try BQL.condition("join friends having age > ?", parameters: [.integer(1)])
        }
        #expect(throws: QueryLanguageError.self) { try BQL.condition("where age > ?") }
        // Only the word `join` is refused, not a property that starts with it.
        #expect(
            try BQL.condition("joined = 1") == .comparison(.property(PropertyPath(["joined"])), .equal, .integer(1)))
        let joined = try BQL.query(
            "join comments having stars > ? join author where title = ? AND note = 'where join'",
            parameters: [.integer(3), .string("M")])
        #expect(joined.joins.map(\.relation) == ["comments", "author"])
        #expect(joined.joins[0].having == .comparison(.property(PropertyPath(["stars"])), .greater, .integer(3)))
        #expect(joined.joins[1].having == nil)
        #expect(
            joined.condition
                == .and([
                    .comparison(.property(PropertyPath(["title"])), .equal, .string("M")),
                    .comparison(.property(PropertyPath(["note"])), .equal, .string("where join")),
                ]))
        for bad in [
            "having x = 1", "where a = 1 join b", "join a b", "join a having x = 1 having y = 2",
            "where a = 1 where b = 2", "join",
        ] {
            #expect(throws: QueryLanguageError.self, "\(bad)") { try BQL.query(bad) }
        }
    }

    @Test func quickBloxFiltersMapOntoTheTree() throws {
        let query = try QuickBloxFilter.parse([
            ("rating[gt]", "5.5"), ("documentary", "false"), ("tags[all]", "a,b"), ("name[ctn]", "50%"),
            ("genre[or]", "drama,comedy"), ("sort_asc", "rating"), ("limit", "5"), ("skip", "2"),
            ("output[include]", "_id,name"),
        ])
        let rating = ValueExpression.property(PropertyPath(["rating"]))
        #expect(
            query.condition
                == .and([
                    .comparison(rating, .greater, .string("5.5")),
                    .comparison(.property(PropertyPath(["documentary"])), .equal, .string("false")),
                    .containsAll(.property(PropertyPath(["tags"])), [.string("a"), .string("b")]),
                    .like(Self.name, pattern: .string("%50\\%%"), negated: false),
                    .membership(
                        .property(PropertyPath(["genre"])), [.string("drama"), .string("comedy")], negated: false),
                ]))
        #expect(query.sort == [SortItem(expression: rating, descending: false)])
        #expect(query.limit == 5 && query.skip == 2 && query.include == ["objectId", "name"])
        #expect(try QuickBloxFilter.parse([("count", "1"), ("a[nin]", "1,2")]).countOnly)
        #expect(throws: QueryLanguageError.self) { try QuickBloxFilter.parse([("a[regex]", "x")]) }
        let either = try QuickBloxFilter.parse([("name[or]", "igor"), ("lastname[or]", "khomenko")])
        #expect(
            either.condition
                == .or([
                    .comparison(Self.name, .equal, .string("igor")),
                    .comparison(.property(PropertyPath(["lastname"])), .equal, .string("khomenko")),
                ]))
    }
}
