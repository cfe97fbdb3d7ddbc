package io.github.gcslock.sample;

import io.github.gcslock.test.GcsEmulatorMain;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

import java.util.Arrays;

/**
 * The gcslock sample service. {@code java -jar sample-app.jar} starts it on an embedded GCS emulator;
 * {@code java -jar sample-app.jar emulator --port 4443} runs only the standalone emulator that several
 * instances can share (see run-cluster.sh).
 */
@SpringBootApplication
@EnableScheduling
public class SampleApplication {

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("emulator")) {
            GcsEmulatorMain.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        SpringApplication.run(SampleApplication.class, args);
    }
}
