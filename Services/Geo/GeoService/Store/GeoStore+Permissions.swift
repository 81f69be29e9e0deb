import DataEngine

extension GeoStore {
    /// Category permission cells (``CategoryRules``) in `geo.category_permissions`, changes
    /// announced on `geo_category_rules`.
    var categoryRuleTable: ContainerRuleTable<GeoOperation> {
        ContainerRuleTable(
            database: database, logger: logger, table: "geo.category_permissions", containerColumn: "category",
            channel: "geo_category_rules")
    }
}
