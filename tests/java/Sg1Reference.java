// Reference for the SG1 generator, written from YABench's documented behaviour (not its code):
// station offsets nextInt(interval) in station order, stations sorted stably by offset, then
// round-robin emission every interval while time <= duration, the first emission stamped 0,
// values nextInt(max - min) + min with one decimal, 7 triples per observation in YABench's .n3t
// form (unquoted typed literal, no final dot).
// Run as: java Sg1Reference.java STATIONS INTERVAL_MS DURATION_MS SEED MIN MAX
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;

public class Sg1Reference {
    public static void main(String[] a) {
        int stations = Integer.parseInt(a[0]);
        long interval = Long.parseLong(a[1]);
        long duration = Long.parseLong(a[2]);
        Random random = new Random(Long.parseLong(a[3]));
        int min = Integer.parseInt(a[4]);
        int max = Integer.parseInt(a[5]);
        List<long[]> list = new ArrayList<>();  // {id, next}
        for (int i = 0; i < stations; i++) {
            list.add(new long[] {i, random.nextInt((int) interval)});
        }
        list.sort(Comparator.comparingLong(s -> s[1]));
        ArrayDeque<long[]> queue = new ArrayDeque<>(list);
        String ssw = "http://knoesis.wright.edu/ssw/";
        String om = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#";
        String w = "http://knoesis.wright.edu/ssw/ont/weather.owl#";
        String type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>";
        StringBuilder out = new StringBuilder();
        long time = 0L;
        while (time <= duration) {
            long[] st = queue.pollFirst();
            float value = random.nextInt(max - min) + min;
            String key = st[0] + "_" + time;
            String obs = "<" + ssw + "Observation_AirTemperature_A" + key + ">";
            String data = "<" + ssw + "MeasureData_AirTemperature_A" + key + ">";
            String ts = " \"" + time + "\"\n";
            out.append(obs).append(' ').append(type).append(" <").append(w).append("TemperatureObservation>").append(ts);
            out.append(obs).append(" <").append(om).append("observedProperty> <").append(w).append("_AirTemperature>").append(ts);
            out.append(obs).append(" <").append(om).append("procedure> <").append(ssw).append("System_A").append(st[0]).append('>').append(ts);
            out.append(obs).append(" <").append(om).append("result> ").append(data).append(ts);
            out.append(data).append(' ').append(type).append(" <").append(om).append("MeasureData>").append(ts);
            out.append(data).append(" <").append(om).append("floatValue> ")
               .append(String.format(Locale.ENGLISH, "%.1f", value))
               .append("^^http://www.w3.org/2001/XMLSchema#float").append(ts);
            out.append(data).append(" <").append(om).append("uom> <").append(w).append("fahrenheit>").append(ts);
            st[1] += interval;
            queue.addLast(st);
            time = queue.peekFirst()[1];
        }
        System.out.print(out);
    }
}
