package mneme.launcher;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.config.Setting;
import org.neo4j.io.ByteUnit;

/**
 * Runs Neo4j Community embedded with only a Bolt connector on 127.0.0.1.
 *
 * Usage: Launcher PORT DATA_DIR
 *
 * Prints "READY bolt://127.0.0.1:PORT" on stdout once the default database
 * is available and Bolt accepts connections; scripts/neo4j.sh waits for it.
 * SIGTERM/SIGINT run a shutdown hook that shuts the DBMS down cleanly.
 */
public final class Launcher {
    private static final String HOST = "127.0.0.1";

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Launcher PORT DATA_DIR");
            System.exit(64);
        }
        int port = Integer.parseInt(args[0]);
        Path dataDir = Path.of(args[1]).toAbsolutePath();
        long pageCache = ByteUnit.parse(System.getProperty("mneme.pagecache", "256m"));
        long txMemory = ByteUnit.parse(System.getProperty("mneme.txmemory", "512m"));

        long t0 = System.nanoTime();
        DatabaseManagementService dbms;
        try {
            DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(dataDir);
            // Settings that differ between 5.26 and 2026.x, set only where present:
            // Netty's default 5 s quiet period per Bolt event loop makes shutdown take ~10 s.
            setInternal(builder, "org.neo4j.configuration.GraphDatabaseInternalSettings",
                    "netty_server_shutdown_quiet_period", 0);
            setInternal(builder, "org.neo4j.configuration.GraphDatabaseInternalSettings",
                    "netty_server_shutdown_timeout", Duration.ofSeconds(5));
            // The in-JVM "local" Bolt channel is unused here.
            setInternal(builder, "org.neo4j.configuration.connectors.BoltConnectorInternalSettings",
                    "enable_local_connector", false);
            setInternal(builder, "org.neo4j.configuration.GraphDatabaseInternalSettings",
                    "udc_network_enabled", false);
            // 2026.x only: Bolt "fleet discovery" UDP broadcasts on private networks; keep it off.
            setInternal(builder, "org.neo4j.configuration.connectors.BoltConnector",
                    "enable_discovery", false);
            dbms = builder
                    .setConfig(GraphDatabaseSettings.data_directory, dataDir)
                    .setConfig(GraphDatabaseSettings.logs_directory, dataDir.resolve("logs"))
                    .setConfig(BoltConnector.enabled, true)
                    .setConfig(BoltConnector.listen_address, new SocketAddress(HOST, port))
                    .setConfig(BoltConnector.advertised_address, new SocketAddress(HOST, port))
                    .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                    .setConfig(HttpConnector.enabled, false)
                    .setConfig(HttpsConnector.enabled, false)
                    .setConfig(GraphDatabaseSettings.auth_enabled, false)
                    .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                    .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, txMemory)
                    .setConfig(GraphDatabaseSettings.log_queries, GraphDatabaseSettings.LogQueryLevel.OFF)
                    // No outbound "usage data" calls: the machine has no internet.
                    .setConfig(GraphDatabaseSettings.udc_enabled, false)
                    // Preallocated 256 MiB transaction log files waste disk for a dev server.
                    .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                    .setConfig(GraphDatabaseSettings.keep_logical_logs, "100M size")
                    .build();
        } catch (Throwable e) {
            System.err.println("FAILED to start Neo4j on " + HOST + ":" + port + ": " + rootMessage(e));
            e.printStackTrace();
            System.exit(2);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.err.println("shutting down Neo4j");
            try {
                dbms.shutdown();
            } finally {
                stopped.countDown();
            }
        }, "neo4j-shutdown"));

        try {
            GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
            while (!db.isAvailable(1000)) {
                System.err.println("waiting for database " + db.databaseName());
            }
            waitForBolt(port);
        } catch (Throwable e) {
            // Neo4j's threads are non-daemon: exit explicitly (the hook shuts it down).
            System.err.println("FAILED waiting for Neo4j: " + rootMessage(e));
            e.printStackTrace();
            System.exit(3);
        }

        System.err.printf("Neo4j %s started in %d ms%n",
                org.neo4j.kernel.internal.Version.getNeo4jVersion(), (System.nanoTime() - t0) / 1_000_000);
        System.out.println("READY bolt://" + HOST + ":" + port);
        System.out.flush();
        stopped.await();
    }

    // Bolt binds during build(), but check that it accepts connections before saying READY.
    private static void waitForBolt(int port) throws InterruptedException {
        for (int i = 0; i < 300; i++) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(HOST, port), 1000);
                return;
            } catch (java.io.IOException e) {
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("Bolt not accepting connections on port " + port);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void setInternal(DatabaseManagementServiceBuilder b, String cls, String field, Object value) {
        try {
            Setting setting = (Setting) Class.forName(cls).getField(field).get(null);
            // 5.26 has the quiet period as Integer seconds, 2026.x as a Duration.
            if (value instanceof Integer secs && setting.defaultValue() instanceof Duration) {
                value = Duration.ofSeconds(secs);
            }
            b.setConfig(setting, value);
        } catch (NoSuchFieldException | ClassNotFoundException e) {
            // Not in this Neo4j version: nothing to turn off.
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("note: setting " + cls + "." + field + " not applied: " + e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
            sb.append(" <- ").append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
        }
        return sb.toString();
    }
}
