// Prints `count` successive java.util.Random(seed).nextInt(bound) values, one per line.
// Reference for rsp_sdk.streams.generators.javarandom (run as: java JavaRandomInts.java SEED BOUND COUNT).
import java.util.Random;

public class JavaRandomInts {
    public static void main(String[] args) {
        Random random = new Random(Long.parseLong(args[0]));
        int bound = Integer.parseInt(args[1]);
        int count = Integer.parseInt(args[2]);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < count; i++) {
            out.append(random.nextInt(bound)).append('\n');
        }
        System.out.print(out);
    }
}
