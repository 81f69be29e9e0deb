import QueryLanguage

enum DataRoutesSupport {
    static func condition(_ text: String) throws -> Condition {
        try QueryParser.condition(text)
    }
}
