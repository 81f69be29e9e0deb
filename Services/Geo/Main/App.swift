import GeoService
import ServiceRuntime

/// geo-service: `serve` (default), `migrate`, `pki-init [DIR]`.
@main
struct GeoServiceMain {
    static func main() async {
        await ServiceCommand.exitOnError {
            try await ServiceCommand.main(GeoService.self, arguments: Array(CommandLine.arguments.dropFirst()))
        }
    }
}
