// CheckAndAdd.java — a crawler's call to `neardup serve` from Java 17 with
// the JDK alone (java.net.http): store a page unless a near-duplicate is
// stored. Run: java CheckAndAdd.java URL KEY TEXT-FILE
// (NEARDUP_TOKEN in the environment: the bearer token, when the server
// has --token-file). Prints "new" or "duplicate of KEY (distance D)".
// The JDK has no JSON parser: the request is written by hand (jsonString)
// and the answer's two members read with a pattern; a fleet client would
// use its JSON library (Jackson, Gson) for both.
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class CheckAndAdd {
    static String jsonString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: java CheckAndAdd.java URL KEY TEXT-FILE");
            System.exit(1);
        }
        String body = "{\"key\":" + jsonString(args[1]) + ",\"text\":"
                + jsonString(Files.readString(Path.of(args[2]))) + "}";
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        HttpRequest.Builder rq = HttpRequest.newBuilder(URI.create(args[0] + "/v1/check-and-add"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        String token = System.getenv("NEARDUP_TOKEN");
        if (token != null) rq.header("Authorization", "Bearer " + token);
        HttpResponse<String> r = http.send(rq.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) { // {"error":{"status","code","message"}}
            System.err.println("neardup serve: " + r.statusCode() + " " + r.body());
            System.exit(2);
        }
        // {"new":true,...} or {"new":false,...,"match":{"key":"...",...,"distance":D,...}}
        if (r.body().startsWith("{\"new\":true")) {
            System.out.println("new");
            return;
        }
        Matcher m = Pattern.compile("\"match\":\\{\"key\":\"((?:[^\"\\\\]|\\\\.)*)\".*?\"distance\":(\\d+)")
                .matcher(r.body());
        if (!m.find()) throw new IllegalStateException("unexpected answer: " + r.body());
        String key = m.group(1).replaceAll("\\\\(.)", "$1"); // \" and \\ (a key with \\u: use a parser)
        System.out.println("duplicate of " + key + " (distance " + m.group(2) + ")");
    }
}
