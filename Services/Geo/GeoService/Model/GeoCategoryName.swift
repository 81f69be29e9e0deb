import InternalProtocol

/// Category names: 1 to 100 characters, no commas (lists of them travel comma-separated) and no
/// control characters. Any spelling of `default` is the Default category.
enum GeoCategoryName {
    /// The category every app has and points without categories are in.
    static let standard = "Default"

    /// `name` checked, with any spelling of `default` made `Default` (4005 when invalid).
    static func normalized(_ name: String) throws(ErrorEnvelope) -> String {
        guard (1...100).contains(name.count), !name.contains(","),
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
            !name.allSatisfy(\.isWhitespace)
        else { throw GeoError.invalidCategoryName(String(name.prefix(120))) }
        return name.lowercased() == standard.lowercased() ? standard : name
    }

    /// Distinct normalised names in byte order (the order answers list them in), or Default for
    /// none.
    static func set(_ names: [String]) throws(ErrorEnvelope) -> [String] {
        var normalized: Set<String> = []
        for name in names { normalized.insert(try Self.normalized(name)) }
        return normalized.isEmpty ? [standard] : normalized.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
