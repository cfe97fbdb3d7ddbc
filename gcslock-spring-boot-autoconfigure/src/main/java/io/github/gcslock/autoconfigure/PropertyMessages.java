package io.github.gcslock.autoconfigure;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rewrites the engine's messages for a Spring Boot user: builder setting names become {@code gcslock.*}
 * property names and ISO-8601 durations ({@code PT37S}) become Boot's style ({@code 37s}), the form the
 * user writes in {@code application.properties}.
 */
final class PropertyMessages {

    /**
     * The builder settings that have a property ({@link BuilderSettings}), each with its property; longest
     * first so that {@code backoff.max} wins over a shorter token.
     */
    private static final Map<String, String> SETTINGS = new LinkedHashMap<>();

    static {
        BuilderSettings.names().stream().sorted(Comparator.comparingInt(String::length).reversed())
                .forEach(setting -> SETTINGS.put(setting, BuilderSettings.propertyOf(setting)));
    }

    // A setting name not already part of a property name (gcslock.ttl) or of another word.
    private static final Pattern SETTING = Pattern.compile("(?<![\\w.-])("
            + String.join("|", SETTINGS.keySet().stream().map(Pattern::quote).toList()) + ")(?![\\w-])");
    private static final Pattern ISO_DURATION = Pattern.compile("-?P(?:\\d+D)?T?(?:-?\\d+H)?(?:-?\\d+M)?(?:-?\\d+(?:\\.\\d+)?S)?");
    private static final Pattern QUOTED = Pattern.compile("'[^']*'");

    private PropertyMessages() {
    }

    /** A setting named by one lower-case word ({@code bucket}, {@code prefix}), which may also be plain English. */
    private static final Pattern ENGLISH_WORD = Pattern.compile("[a-z]+");

    /**
     * {@code message} with property names and Boot-style durations; quoted parts (lock names, prefixes) are left
     * alone. A setting named by a plain word ({@code bucket}, {@code prefix}, {@code ttl}) is renamed where it
     * first appears only, and not at all when the message names its property already: "the GCS bucket" must not
     * become "the GCS gcslock.bucket". Camel-case and dotted settings ({@code refreshInterval}) are renamed everywhere.
     */
    static String translate(String message) {
        if (message == null) {
            return null;
        }
        Set<String> named = new HashSet<>();
        SETTINGS.forEach((setting, property) -> {
            if (Pattern.compile(Pattern.quote(property) + "(?![\\w-])").matcher(message).find()) {
                named.add(setting);
            }
        });
        StringBuilder out = new StringBuilder();
        Matcher quoted = QUOTED.matcher(message);
        int at = 0;
        while (quoted.find()) {
            out.append(translatePlain(message.substring(at, quoted.start()), named)).append(quoted.group());
            at = quoted.end();
        }
        return out.append(translatePlain(message.substring(at), named)).toString();
    }

    private static String translatePlain(String text, Set<String> named) {
        Matcher iso = ISO_DURATION.matcher(text);
        StringBuilder sb = new StringBuilder();
        while (iso.find()) {
            String replacement = iso.group();
            if (replacement.length() > 2) {
                try {
                    replacement = format(Duration.parse(iso.group()));
                } catch (DateTimeParseException e) {
                    // not a duration after all: leave it as it was
                }
            }
            iso.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        iso.appendTail(sb);
        return SETTING.matcher(sb.toString()).replaceAll(m -> {
            String setting = m.group(1);
            boolean renamed = !ENGLISH_WORD.matcher(setting).matches() || named.add(setting);
            return Matcher.quoteReplacement(renamed ? SETTINGS.get(setting) : setting);
        });
    }

    /**
     * A duration as Boot's simple style writes it, in the largest unit that holds it exactly: {@code 5m}, {@code 37s},
     * {@code 10ms}. One that is not a whole number of milliseconds (a computed bound such as ttl / 3 =
     * 1.666666666s) is first rounded down to two significant digits ({@code 1600ms}): Boot's style has no
     * fractions ({@code 1.6s} would not bind), and rounding down keeps an upper bound ("use ... &lt; 1600ms") true.
     */
    static String format(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        long nanos;
        try {
            nanos = d.toNanos();
        } catch (ArithmeticException tooLong) {
            return d.toDays() + "d";
        }
        if (nanos % 1_000_000L != 0) {
            long scale = 1;
            while (nanos / scale >= 100) {
                scale *= 10;
            }
            nanos = nanos / scale * scale;
        }
        long[] sizes = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L, 1L};
        String[] units = {"d", "h", "m", "s", "ms", "us", "ns"};
        for (int i = 0; i < sizes.length; i++) {
            if (nanos % sizes[i] == 0) {
                return (nanos / sizes[i]) + units[i];
            }
        }
        return nanos + "ns";
    }
}
