"""Small built-in dictionaries for the ``social`` generator.

LSBench's S2Gen draws names, places, universities and interests from large dictionary files
(names by country, DBpedia places, top universities, singer names). We do not ship those files; a
few dozen entries of each kind are enough for streaming queries, which care about joins and
selectivities rather than about the variety of names. Cities carry their DBpedia resource name
(LSBench links ``foaf:based_near`` to DBpedia) and approximate coordinates; they are listed roughly
by population, which the generator turns into a skewed (Zipf) distribution of users.
"""

from __future__ import annotations

CITIES: tuple[tuple[str, str, float, float], ...] = (
    # DBpedia resource, label, latitude, longitude
    ("Tokyo", "Tokyo", 35.6895, 139.6917),
    ("Delhi", "Delhi", 28.7041, 77.1025),
    ("Shanghai", "Shanghai", 31.2304, 121.4737),
    ("Mexico_City", "Mexico City", 19.4326, -99.1332),
    ("Cairo", "Cairo", 30.0444, 31.2357),
    ("Mumbai", "Mumbai", 19.0760, 72.8777),
    ("Beijing", "Beijing", 39.9042, 116.4074),
    ("Dhaka", "Dhaka", 23.8103, 90.4125),
    ("Osaka", "Osaka", 34.6937, 135.5023),
    ("New_York_City", "New York City", 40.7128, -74.0060),
    ("Karachi", "Karachi", 24.8607, 67.0011),
    ("Buenos_Aires", "Buenos Aires", -34.6037, -58.3816),
    ("Istanbul", "Istanbul", 41.0082, 28.9784),
    ("Kolkata", "Kolkata", 22.5726, 88.3639),
    ("Manila", "Manila", 14.5995, 120.9842),
    ("Lagos", "Lagos", 6.5244, 3.3792),
    ("Rio_de_Janeiro", "Rio de Janeiro", -22.9068, -43.1729),
    ("Los_Angeles", "Los Angeles", 34.0522, -118.2437),
    ("Moscow", "Moscow", 55.7558, 37.6173),
    ("Paris", "Paris", 48.8566, 2.3522),
    ("Bangkok", "Bangkok", 13.7563, 100.5018),
    ("London", "London", 51.5074, -0.1278),
    ("Lima", "Lima", -12.0464, -77.0428),
    ("Seoul", "Seoul", 37.5665, 126.9780),
    ("Jakarta", "Jakarta", -6.2088, 106.8456),
    ("Chicago", "Chicago", 41.8781, -87.6298),
    ("Santiago", "Santiago", -33.4489, -70.6693),
    ("Hanoi", "Hanoi", 21.0278, 105.8342),
    ("Madrid", "Madrid", 40.4168, -3.7038),
    ("Singapore", "Singapore", 1.3521, 103.8198),
    ("Berlin", "Berlin", 52.5200, 13.4050),
    ("Sydney", "Sydney", -33.8688, 151.2093),
    ("Rome", "Rome", 41.9028, 12.4964),
    ("Toronto", "Toronto", 43.6532, -79.3832),
    ("Nairobi", "Nairobi", -1.2921, 36.8219),
    ("Johannesburg", "Johannesburg", -26.2041, 28.0473),
    ("Vienna", "Vienna", 48.2082, 16.3738),
    ("Amsterdam", "Amsterdam", 52.3676, 4.9041),
    ("Dublin", "Dublin", 53.3498, -6.2603),
    ("Galway", "Galway", 53.2707, -9.0568),
)

UNIVERSITY_PATTERNS: tuple[str, ...] = (
    "University of {}",
    "{} Institute of Technology",
    "{} State University",
    "{} College of Arts",
    "{} School of Medicine",
)

FIRST_NAMES_FEMALE: tuple[str, ...] = (
    "Anna", "Maria", "Sofia", "Emma", "Olivia", "Mia", "Aisha", "Yuki", "Mei", "Priya",
    "Fatima", "Elena", "Laura", "Chloe", "Ines", "Sara", "Hana", "Lucia", "Nadia", "Amara",
)  # fmt: skip

FIRST_NAMES_MALE: tuple[str, ...] = (
    "James", "Luca", "Mohamed", "Wei", "Hiroshi", "Arjun", "Carlos", "Ivan", "Noah", "Ali",
    "Pedro", "Tomas", "Kenji", "David", "Omar", "Liam", "Mateo", "Sean", "Jin", "Kofi",
)  # fmt: skip

LAST_NAMES: tuple[str, ...] = (
    "Smith", "Garcia", "Wang", "Kumar", "Silva", "Nguyen", "Kim", "Muller", "Rossi", "Tanaka",
    "Ivanov", "Hassan", "Okafor", "Lopez", "Martin", "Chen", "Singh", "Sato", "Novak", "Murphy",
    "Dubois", "Santos", "Cohen", "Ahmed", "Park", "Fischer", "Costa", "Yilmaz", "Kowalski", "Ali",
)  # fmt: skip

INTERESTS: tuple[str, ...] = (
    "Rock", "Pop", "Jazz", "Blues", "Hip hop", "Classical music", "Reggae", "Salsa", "Tango",
    "Techno", "House music", "Country music", "Folk music", "Heavy metal", "Punk rock", "Soul",
    "Funk", "Disco", "Opera", "K-pop", "J-pop", "Bossa nova", "Flamenco", "Afrobeat", "Gospel",
    "Ska", "Grunge", "Indie rock", "Trance", "Dubstep", "Samba", "Bollywood music", "Fado",
    "Celtic music", "Bluegrass", "Swing", "Ambient music", "Drum and bass", "Rhythm and blues",
    "Electronic music",
)  # fmt: skip

WORDS: tuple[str, ...] = (
    "about", "after", "again", "amazing", "around", "band", "best", "city", "concert", "day",
    "evening", "festival", "friends", "game", "great", "home", "last", "life", "live", "love",
    "morning", "music", "new", "night", "old", "party", "people", "photo", "place", "play",
    "really", "road", "show", "song", "street", "summer", "sunny", "team", "time", "today",
    "tonight", "trip", "view", "walk", "weekend", "with", "work", "world", "year", "young",
)  # fmt: skip
