import FilesService
import ServiceRuntime

/// files-service: `serve` (default), `migrate`, `pki-init [DIR]`.
@main
struct FilesServiceMain {
    static func main() async {
        await ServiceCommand.exitOnError {
            try await ServiceCommand.main(FilesService.self, arguments: Array(CommandLine.arguments.dropFirst()))
        }
    }
}
