package io.github.gcslock.test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;

/**
 * One {@code objects.list} request: {@code prefix}, {@code delimiter} (with {@code prefixes}),
 * {@code includeTrailingDelimiter}, {@code startOffset}/{@code endOffset}, {@code matchGlob},
 * {@code maxResults} and {@code pageToken}.
 *
 * <p>Filters apply to object names; {@code prefixes} are the distinct "directories" of the names that
 * pass them. A page holds at most {@code maxResults} entries, items and prefixes together, as on GCS.
 * The page token names the last entry handed out (an object or a prefix), so the next page starts
 * right after it: no object is skipped or repeated, and a prefix is never repeated on a later page
 * because every name under it is skipped at once. A token is only set when another entry exists.
 */
final class ListQuery {

    static final int MAX_PAGE = 1000;

    final String prefix;
    final String delimiter;
    final boolean includeTrailingDelimiter;
    final String startOffset;
    final String endOffset;
    final Glob glob;
    final int maxResults;
    final String pageToken;

    private ListQuery(String prefix, String delimiter, boolean includeTrailingDelimiter, String startOffset,
                      String endOffset, Glob glob, int maxResults, String pageToken) {
        this.prefix = prefix;
        this.delimiter = delimiter;
        this.includeTrailingDelimiter = includeTrailingDelimiter;
        this.startOffset = startOffset;
        this.endOffset = endOffset;
        this.glob = glob;
        this.maxResults = maxResults;
        this.pageToken = pageToken;
    }

    static ListQuery from(Map<String, String> query) {
        String delimiter = emptyToNull(query.get("delimiter"));
        int max = MAX_PAGE;
        String maxText = query.get("maxResults");
        if (maxText != null) {
            try {
                max = Integer.parseInt(maxText);
            } catch (NumberFormatException e) {
                throw new GcsError(400, "invalid", "Invalid value for maxResults: " + maxText);
            }
            if (max < 0) {
                throw new GcsError(400, "invalid", "Invalid value for maxResults: " + maxText);
            }
            max = max == 0 ? MAX_PAGE : Math.min(max, MAX_PAGE);
        }
        String glob = emptyToNull(query.get("matchGlob"));
        return new ListQuery(query.getOrDefault("prefix", ""), delimiter,
                bool(query, "includeTrailingDelimiter"), emptyToNull(query.get("startOffset")),
                emptyToNull(query.get("endOffset")), glob == null ? null : Glob.compile(glob), max,
                emptyToNull(query.get("pageToken")));
    }

    /** One page of a listing: objects, "directory" prefixes, and the token of the next page (null: none). */
    record Page<T>(List<T> items, List<String> prefixes, String nextPageToken) {
    }

    /** Runs the query over a bucket's live objects (in name order). */
    <T> Page<T> run(NavigableMap<String, T> objects) {
        List<T> items = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        int entries = 0;
        String lastEntry = null; // token of the last entry handed out
        String currentPrefix = null; // the prefix handed out last; names under it are skipped
        boolean more = false;

        String from = prefix;
        if (startOffset != null && startOffset.compareTo(from) > 0) {
            from = startOffset;
        }
        boolean inclusive = true;
        if (pageToken != null) {
            Token t = Token.decode(pageToken);
            if (t.isPrefix) {
                currentPrefix = t.key;
            }
            if (t.key.compareTo(from) >= 0) {
                from = t.key;
                inclusive = t.isPrefix; // a prefix entry itself may also be an object name still to skip
            }
        }
        for (Map.Entry<String, T> e : objects.tailMap(from, inclusive).entrySet()) {
            String name = e.getKey();
            if (!name.startsWith(prefix)) {
                break; // names are sorted: past the prefix nothing matches any more
            }
            if (endOffset != null && name.compareTo(endOffset) >= 0) {
                break;
            }
            if (currentPrefix != null && name.startsWith(currentPrefix)) {
                continue;
            }
            if (glob != null && !glob.matches(name)) {
                continue;
            }
            String rollup = rollup(name);
            int needed = rollup == null ? 1 : (includeTrailingDelimiter && name.equals(rollup) ? 2 : 1);
            if (entries > 0 && entries + needed > maxResults) {
                more = true;
                break;
            }
            if (rollup == null) {
                items.add(e.getValue());
                lastEntry = Token.object(name);
            } else {
                prefixes.add(rollup);
                if (needed == 2) {
                    items.add(e.getValue());
                }
                currentPrefix = rollup;
                lastEntry = Token.prefix(rollup);
            }
            entries += needed;
        }
        return new Page<>(List.copyOf(items), List.copyOf(prefixes), more ? lastEntry : null);
    }

    /** The prefix a name rolls up into under the delimiter, or null when it is listed as an item. */
    private String rollup(String name) {
        if (delimiter == null) {
            return null;
        }
        int at = name.indexOf(delimiter, prefix.length());
        return at < 0 ? null : name.substring(0, at + delimiter.length());
    }

    private static boolean bool(Map<String, String> query, String key) {
        String v = query.get(key);
        if (v == null) {
            return false;
        }
        if (v.equals("true") || v.equals("false")) {
            return v.equals("true");
        }
        throw new GcsError(400, "invalid", "Invalid value for " + key + ": " + v);
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /** A page token: "o:" + the last object name handed out, or "p:" + the last prefix. */
    private record Token(boolean isPrefix, String key) {

        static String object(String name) {
            return encode("o:" + name);
        }

        static String prefix(String prefix) {
            return encode("p:" + prefix);
        }

        private static String encode(String s) {
            return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
        }

        static Token decode(String token) {
            String s;
            try {
                s = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new GcsError(400, "invalid", "Invalid pageToken: " + token);
            }
            if (s.startsWith("o:")) {
                return new Token(false, s.substring(2));
            }
            if (s.startsWith("p:")) {
                return new Token(true, s.substring(2));
            }
            throw new GcsError(400, "invalid", "Invalid pageToken: " + token);
        }
    }
}
